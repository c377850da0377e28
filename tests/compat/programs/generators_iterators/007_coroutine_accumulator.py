def accumulator(name):
    received = []
    try:
        while True:
            item = yield len(received)
            if item.get("qty", 0) <= 0:
                print(f"[{name}] rejected {item['sku']}")
                continue
            received.append(item)
    except GeneratorExit:
        print(f"[{name}] closing with {len(received)} items")
    finally:
        print(f"[{name}] total qty = {sum(i['qty'] for i in received)}")

acc = accumulator("warehouse-A")
next(acc)
for item in [{"sku": "A", "qty": 3}, {"sku": "B", "qty": 0}, {"sku": "C", "qty": 7}]:
    count = acc.send(item)
    print("accepted so far:", count)
acc.close()
