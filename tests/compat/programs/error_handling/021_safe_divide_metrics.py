campaigns = [
    {"name": "spring", "clicks": 1200, "impressions": 48000, "spend": 300.0, "conversions": 36},
    {"name": "summer", "clicks": 0, "impressions": 0, "spend": 0.0, "conversions": 0},
    {"name": "autumn", "clicks": 450, "impressions": 30000, "spend": 210.0, "conversions": 0},
]

def ratio(num, den, label):
    try:
        return num / den
    except ZeroDivisionError as e:
        print(f"  [{label}] {type(e).__name__}: {e}")
        return None

def fmt(x, spec):
    return "n/a" if x is None else format(x, spec)

for c in campaigns:
    print(c["name"])
    ctr = ratio(c["clicks"], c["impressions"], "ctr")
    cpa = ratio(c["spend"], c["conversions"], "cpa")
    cvr = ratio(c["conversions"], c["clicks"], "cvr")
    print(f"  ctr={fmt(ctr, '.2%')} cpa={fmt(cpa, '.2f')} cvr={fmt(cvr, '.1%')}")
try:
    10 // 0
except ZeroDivisionError as e:
    print("floor division:", e)
