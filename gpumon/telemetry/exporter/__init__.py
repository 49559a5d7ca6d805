"""``gpumon exporter``: the reader thread, the HTTP server, the routes, the /metrics page, the
series and the web config.
"""
