"""The command line: ``gpumon`` (:mod:`.main`), ``gpumon lesson``, ``gpumon exporter``,
``gpumon --prometheus URL --once``. The paths that print load no Qt."""
