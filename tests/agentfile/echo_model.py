"""A model ``satchel run`` loads with ``--model FILE:echo``: it answers with the system
prompt it was sent, so a test can read what reached the model."""

from satchel.agent import FunctionModel, ModelRequest, ModelResponse


def _reply(request: ModelRequest) -> ModelResponse:
    return ModelResponse(text=request.system)


echo = FunctionModel(_reply)
