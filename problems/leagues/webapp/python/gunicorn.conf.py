# gunicorn's settings for the leagues problem's Python reference app; `gunicorn` run in this directory reads them.
import os

wsgi_app = "app:app"
bind = os.environ.get("LEAGUES_ADDR") or "127.0.0.1:8080"

# Sync workers serve one request at a time each, in separate processes (Python runs one thread of Python code at a
# time per process). Four keep the two cores of the reference machine busy while some workers wait on SQLite's
# locks, the tenants' file locks or MariaDB's round trips, without many more processes than cores competing for
# the CPU.
worker_class = "sync"
workers = 4

# No control socket: its default path is the same for every gunicorn of the user, so two apps would clash.
control_socket_disable = True


def on_starting(server):
    """In the master, before the workers start: makes the working data from the initial data if it is missing."""
    import app

    app.prepare_data(server.log)


def when_ready(server):
    """The launcher waits for this line, with the port really bound (LEAGUES_ADDR may ask for port 0)."""
    host, port = server.LISTENERS[0].sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    server.log.info("listening on http://%s:%d", host, port)
