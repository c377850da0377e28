import unicodedata

names = ["José", "Jose\u0301", "STRASSE", "straße", "Ångström", "ﬁle", "Ǆemal"]
for n in names:
    nfc = unicodedata.normalize("NFC", n)
    nfkd = unicodedata.normalize("NFKD", n)
    ascii_ = "".join(c for c in nfkd if not unicodedata.combining(c))
    print(f"{n!r:14} len={len(n)} nfc_len={len(nfc)} fold={n.casefold()!r:12} ascii={ascii_!r}")

print("José == Jose\u0301:", "José" == "Jose\u0301",
      "| NFC equal:", unicodedata.normalize("NFC", "José") == unicodedata.normalize("NFC", "Jose\u0301"))
print("casefold match:", "STRASSE".casefold() == "straße".casefold(), "| lower match:", "STRASSE".lower() == "straße".lower())
for ch in "é€ß":
    print(ch, unicodedata.name(ch), unicodedata.category(ch))
