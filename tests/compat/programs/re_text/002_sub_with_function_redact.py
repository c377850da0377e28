import re

text = """Contact alice@example.com or call +1 (555) 010-9999.
Card on file: 4111 1111 1111 1111, backup bob.smith@corp.co.uk, phone 555-123-4567."""

def mask_email(m):
    user, domain = m.group(1), m.group(2)
    return f"{user[0]}{'*' * (len(user) - 1)}@{domain}"

def mask_card(m):
    digits = re.sub(r"\D", "", m.group())
    return "**** **** **** " + digits[-4:]

out = re.sub(r"([\w.]+)@([\w.]+\w)", mask_email, text)
out = re.sub(r"\b(?:\d{4}[ -]?){3}\d{4}\b", mask_card, out)
out, n_phones = re.subn(r"(?:\+1 )?\(?\d{3}\)?[ -]\d{3}-\d{4}", "[phone]", out)
print(out)
print("phones redacted:", n_phones)
