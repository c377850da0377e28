import os
os.environ["SECRET"] = "set by the script"
# --- cell ---
import os
print(os.environ.get("SECRET"), os.getenv("HOME"))
