from fractions import Fraction

recipe = {"flour (cups)": Fraction(2, 3), "sugar (cups)": Fraction(1, 4),
          "butter (tbsp)": Fraction(3), "milk (cups)": Fraction(3, 8)}
scale = Fraction(5, 2)

def mixed(f):
    whole, rem = divmod(f.numerator, f.denominator)
    if rem == 0:
        return str(whole)
    return f"{whole} {rem}/{f.denominator}" if whole else f"{rem}/{f.denominator}"

for item, qty in recipe.items():
    scaled = qty * scale
    print(f"{item:14} {str(qty):>5} -> {mixed(scaled):>7}  ({float(scaled):.3f})")
print("total cups:", mixed(sum(v for k, v in recipe.items() if "cups" in k) * scale))
