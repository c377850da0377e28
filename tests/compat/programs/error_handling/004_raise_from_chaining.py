import json

class ConfigError(Exception):
    pass

def load_config(text):
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError("config is not valid JSON") from e
    try:
        return {"port": int(data["port"]), "host": data.get("host", "localhost")}
    except KeyError as e:
        raise ConfigError(f"missing required key {e}") from e
    except (TypeError, ValueError):
        raise ConfigError("port must be an integer") from None

for text in ['{"port": "8080"}', '{"host": "x"}', '{"port": "eighty"}', '{port: 1}']:
    try:
        print("loaded:", load_config(text))
    except ConfigError as e:
        cause = e.__cause__
        print(f"ConfigError: {e} | cause={type(cause).__name__ if cause else None}"
              f" | suppress_context={e.__suppress_context__}")
