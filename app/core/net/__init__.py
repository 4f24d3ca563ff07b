"""The network floor: :mod:`.client`, the one HTTP(S) client every request of the assistant goes
through (proxy, CA bundle or the system's trust store, deadlines, failures in words)."""
