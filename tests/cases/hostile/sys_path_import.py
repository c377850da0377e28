import sys
sys.path.insert(0, "/etc")
sys.path.insert(0, "/root")
try:
    import passwd
    print("LEAKED")
except ImportError:
    print("nothing to import from the host")
