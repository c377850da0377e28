print(len(names), names[999], double(total))
