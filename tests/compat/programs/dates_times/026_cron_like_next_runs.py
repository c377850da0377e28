from datetime import datetime, timedelta

def next_runs(start, minute, hours, count):
    out = []
    t = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while len(out) < count:
        if t.minute == minute and t.hour in hours:
            out.append(t)
            t += timedelta(minutes=1)
        else:
            t += timedelta(minutes=1)
    return out

start = datetime(2024, 2, 28, 21, 10)
for run in next_runs(start, 15, {0, 6, 12, 18}, 6):
    print(run.strftime("%a %Y-%m-%d %H:%M"))
