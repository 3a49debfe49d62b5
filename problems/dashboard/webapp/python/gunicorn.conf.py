# gunicorn's settings for the dashboard problem's Python reference app; `gunicorn` run in this directory reads them.
import os

wsgi_app = "app:app"
bind = os.environ.get("DASHBOARD_ADDR") or "127.0.0.1:8080"

# A /data waits on the external services one after another, up to about 1.5 s for a premium user, while the CPU
# idles. Sync workers would hold a whole process per waiting /data, and a handful of them would turn every page
# into a queue behind those waits; threads wait side by side in one process. Four processes of eight threads keep
# the two cores of the reference machine busy (Python runs one thread of Python code at a time per process) and
# let 32 requests wait at once: slow, the way a real app is, but not stuck.
worker_class = "gthread"
workers = 4
threads = 8
# Longer than nginx's 60 s for an idle upstream connection it keeps: an app that closed such a connection first
# (gthread's default is 2 s) would race nginx reusing it, and a POST sent as it closes fails with 502.
keepalive = 75

# No control socket: its default path is the same for every gunicorn of the user, so two apps would clash.
control_socket_disable = True


def on_starting(server):
    """In the master, before the workers start: creates the tables and loads the initial data if needed, and
    stores where the services are from the environment."""
    import app

    app.load_initial_data(server.log)


def when_ready(server):
    """The launcher waits for this line, with the port really bound (DASHBOARD_ADDR may ask for port 0)."""
    host, port = server.LISTENERS[0].sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    server.log.info("listening on http://%s:%d", host, port)
