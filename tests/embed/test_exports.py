import satchel.embed


def test_public_names_are_exported_and_sorted() -> None:
    assert satchel.embed.__all__ == sorted(satchel.embed.__all__)
    public = {name for name in vars(satchel.embed) if not name.startswith("_")}
    assert public == set(satchel.embed.__all__)


def test_every_public_name_has_a_docstring() -> None:
    for name in satchel.embed.__all__:
        assert getattr(satchel.embed, name).__doc__, name
