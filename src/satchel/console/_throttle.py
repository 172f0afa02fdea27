"""The console's throttle is :class:`satchel._throttle.LoginThrottle`, shared with the
MCP endpoint; kept here for the names earlier versions imported."""

from satchel._throttle import MAX_FAILURES, WINDOW, LoginThrottle

__all__ = ["MAX_FAILURES", "WINDOW", "LoginThrottle"]
