# sluice: answers = {"page": ["p1"]}
import sluice
print(await page({}))
try:
    await page({})
except sluice.ToolError as e:
    print(e.code)
