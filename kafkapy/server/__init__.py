"""The broker process: trio listeners, connections, dispatch, API handlers, config."""
