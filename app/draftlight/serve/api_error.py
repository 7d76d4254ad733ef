"""The one error answer of serve's API: an HTTP status with OpenAI's error body. Every module
of the API raises it; routes.py turns it into the response."""

from __future__ import annotations


class ApiError(Exception):
    """An answer with an HTTP error status and OpenAI's error body."""

    def __init__(self, status: int, message: str, *, code: str | None = None,
                 param: str | None = None, type: str = "invalid_request_error",
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param
        self.type, self.headers = type, headers or {}

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}
