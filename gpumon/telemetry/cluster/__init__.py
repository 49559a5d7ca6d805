"""The cluster view's data: a Prometheus HTTP client, its query API, and the answers as machines
and GPUs (PrometheusSource).
"""
