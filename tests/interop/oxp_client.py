"""Interop with the standard's own Python client (PyPI `oxp`), against a running otc-bridge.

Usage: python oxp_client.py BASE_URL
Lists the tools, then makes one successful, one invalid and one failing call, the way an
application built on the SDK would. Exits non-zero (with the reason) on any mismatch.
"""

import sys

import oxp


def main(base_url: str) -> None:
    # The SDK always sends `Authorization: Bearer …`; a bridge without auth must ignore it.
    client = oxp.Oxp(bearer_token="ignored-by-a-server-without-auth", base_url=base_url, max_retries=0)

    client.health.check()

    listed = client.tools.list()
    ids = [tool.id for tool in listed.items]
    assert "DemoNotes.CreateNote@1.0.0" in ids, ids
    assert "DemoTools.Divide@1.0.0" in ids, ids
    for tool in listed.items:
        assert isinstance(tool.input_schema, dict) and "parameters" not in tool.input_schema, tool
    print(f"listed {len(ids)} tools")

    ok = client.tools.call(
        schema="urn:oxp:1.0",
        request={"tool_id": "DemoNotes.CreateNote", "input": {"title": "From oxp", "body": "Hello"}},
    )
    assert ok.result.success is True, ok
    assert ok.result.value["title"] == "From oxp", ok
    print(f"success: {ok.result.value}")

    try:
        client.tools.call(request={"tool_id": "DemoNotes.CreateNote", "input": {"title": 5}})
    except oxp.UnprocessableEntityError as err:
        errors = err.body["parameter_errors"]
        assert "title" in errors and "body" in errors, errors
        print(f"invalid: 422 {errors}")
    else:
        raise AssertionError("an invalid input was accepted")

    failed = client.tools.call(request={"tool_id": "DemoTools.Divide", "input": {"dividend": 1, "divisor": 0}})
    assert failed.result.success is False, failed
    assert "zero" in failed.result.error.message, failed
    print(f"tool error: {failed.result.error.message}")

    try:
        client.tools.call(request={"tool_id": "DemoNotes.NoSuchTool"})
    except oxp.BadRequestError as err:
        print(f"unknown tool: 400 {err.body['message']}")
    else:
        raise AssertionError("an unknown tool was accepted")

    print("oxp interop: ok")


if __name__ == "__main__":
    main(sys.argv[1])
