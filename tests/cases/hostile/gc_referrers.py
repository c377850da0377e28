import gc
# Walking every object finds only the guest's own heap.
objects = gc.get_objects()
host_paths = [o for o in objects if isinstance(o, str) and o.startswith(("/work/", "/root/"))]
print(len(objects) > 1000, host_paths[:3])
