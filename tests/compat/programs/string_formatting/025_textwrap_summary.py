import textwrap

description = (
    "The quarterly analysis shows revenue growth of 12.4% driven primarily by the "
    "enterprise segment, while consumer subscriptions declined slightly. Operating "
    "costs remained flat, resulting in improved margins across all regions."
)
metrics = {"revenue": 4_512_300.0, "growth": 0.124, "margin": 0.318}

print(textwrap.fill(description, width=50, initial_indent="  ", subsequent_indent="  "))
print()
print(textwrap.shorten(description, width=60, placeholder=" [...]"))
print(textwrap.indent(f"revenue: ${metrics['revenue']:,.0f}\ngrowth:  {metrics['growth']:.1%}\nmargin:  {metrics['margin']:.1%}", "> "))
print(textwrap.dedent("""\
    Done.
      (indented note)"""))
