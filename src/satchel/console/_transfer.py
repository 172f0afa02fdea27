"""Export and import of an agent's memory from its page, in the JSON-lines format of
``satchel memory export`` and ``import`` (:func:`satchel.memory.export_lines`), so a file
downloaded here restores with the CLI and the other way round."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from satchel._errors import InvalidInputError
from satchel.console._context import MAX_FORM_BYTES, Console, field
from satchel.memory import Block, Message, OnConflict, export_lines, read_export

__all__ = ["TransferPages"]

_CONFLICTS: tuple[OnConflict, ...] = ("skip", "replace", "error")


class TransferPages:
    """The export and import handlers."""

    def __init__(self, console: Console) -> None:
        self.console = console

    async def export(self, request: Request) -> Response:
        """Download the agent's memory as JSON lines."""
        agent = str(request.path_params["agent"])
        await self.console.known_agent(agent)

        async def lines() -> AsyncIterator[bytes]:
            async for line in export_lines(self.console.store, agent):
                yield (line + "\n").encode()

        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in agent)[:60] or "agent"
        headers = {"content-disposition": f'attachment; filename="{safe}.satchel.jsonl"'}
        return StreamingResponse(lines(), media_type="application/x-ndjson", headers=headers)

    async def import_(self, request: Request) -> Response:
        """Import an uploaded export of this agent, all or nothing (one transaction: a
        bad line or a conflict anywhere writes nothing)."""
        agent = str(request.path_params["agent"])
        form = await self.console.form(request)
        await self.console.known_agent(agent)
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidInputError("choose an export file to import")
        conflict = field(form, "on_conflict", "skip")
        if conflict not in _CONFLICTS:
            raise InvalidInputError(f"{conflict[:20]!r} is not skip, replace or error")
        if upload.size is not None and upload.size > MAX_FORM_BYTES:
            raise InvalidInputError(f"the file is larger than {MAX_FORM_BYTES} bytes")
        on_conflict: OnConflict = (
            "skip" if conflict == "skip" else ("replace" if conflict == "replace" else "error")
        )
        # Streamed from the upload's own file, not copied into bytes and a list first:
        # the import is one transaction, so a bad line anywhere still writes nothing.
        read = 0

        def records() -> Iterator[Block | Message]:
            nonlocal read
            upload.file.seek(0)
            for record in read_export(upload.file, agent=agent):
                read += 1
                yield record

        try:
            report = await self.console.store.import_records(records(), on_conflict=on_conflict)
        except InvalidInputError as exc:
            raise InvalidInputError(f"the file cannot be imported: {exc.message}") from None
        context = {"agent": agent, "report": report, "records": read}
        return self.console.renderer.render(request, "imported.html", context)
