import csv
import io

samples = {
    "semicolon": "name;age;city\nAnn;31;Oslo\nBo;27;Rome\n",
    "tab": "name\tage\tcity\nAnn\t31\tOslo\nBo\t27\tRome\n",
    "comma": "name,age,city\nAnn,31,Oslo\nBo,27,Rome\n",
}
for label, text in samples.items():
    dialect = csv.Sniffer().sniff(text)
    has_header = csv.Sniffer().has_header(text)
    rows = list(csv.reader(io.StringIO(text), dialect))
    print(f"{label:9} delimiter={dialect.delimiter!r} header={has_header} rows={len(rows)}")
    print("   ", rows[1])
