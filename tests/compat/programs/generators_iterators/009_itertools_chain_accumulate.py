from itertools import chain, accumulate, islice, count, takewhile

page1 = [{"id": 1, "amt": 20}, {"id": 2, "amt": 35}]
page2 = [{"id": 3, "amt": 15}]
page3 = [{"id": 4, "amt": 50}, {"id": 5, "amt": 5}]

all_rows = list(chain(page1, page2, page3))
amounts = [r["amt"] for r in all_rows]
running = list(accumulate(amounts))
print("amounts:", amounts)
print("running:", running)
print("max so far:", list(accumulate(amounts, max)))
print("under 100:", list(takewhile(lambda x: x < 100, running)))
ids = (f"ORD-{n}" for n in count(1000, 5))
print(list(islice(ids, 4)))
print(list(chain.from_iterable([[1, 2], [3], []])))
