# sluice: answers = {"fetch": "value"}
# sluice: value_repr = "'value!'"
result = await fetch({})
result + "!"
