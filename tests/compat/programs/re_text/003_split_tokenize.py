import re

expr = "price*qty + 12.5 - (discount/2)>=100 and tax!=0.08"
tokens = re.findall(r"\d+\.\d+|\d+|[A-Za-z_]\w*|>=|<=|!=|==|[-+*/()<>]", expr)
print(tokens)
print("identifiers:", sorted(set(t for t in tokens if re.fullmatch(r"[A-Za-z_]\w*", t))))

csvish = "a, b;c  ;d|e,,f"
print(re.split(r"\s*[,;|]\s*", csvish))
print(re.split(r"(\s*[;|]\s*)", "x; y|z"))
print(re.split(r"\s+", "  leading and   trailing  ".strip(), maxsplit=2))
