"""The HTTP framing data: GGP-Base's exact headers, Content-Length in bytes."""

from __future__ import annotations

from server.protocol.http import (
    CORS_HEADERS,
    host_header_value,
    request_bytes,
    request_headers,
    response_bytes,
    response_headers,
)


def test_a_request_is_an_http_1_0_post_with_headers_in_ggp_base_order():
    assert request_bytes("( PLAY m NIL )", "players.example.org", "Random") == (
        b"POST / HTTP/1.0\r\n"
        b"Accept: text/delim\r\n"
        b"Host: players.example.org\r\n"
        b"Sender: GAMESERVER\r\n"
        b"Receiver: Random\r\n"
        b"Content-Type: text/acl\r\n"
        b"Content-Length: 14\r\n"
        b"\r\n"
        b"( PLAY m NIL )"
    )


def test_content_length_counts_bytes_not_characters():
    headers = dict(request_headers("h", "r", "( PLAY m (caf\u00e9) )"))
    assert headers["Content-Length"] == "18"
    assert dict(response_headers("\u00e9"))["Content-length"] == "2"


def test_loopback_hosts_are_written_as_localhost_without_a_port():
    assert host_header_value("127.0.0.1") == "localhost"
    assert host_header_value("::1") == "localhost"
    assert host_header_value("[::1]") == "localhost"
    assert host_header_value("localhost") == "localhost"
    assert host_header_value("10.1.2.3") == "10.1.2.3"
    assert host_header_value("ggp.example.org") == "ggp.example.org"


def test_a_players_reply_has_ggp_base_header_spelling_and_cors():
    assert response_bytes("busy") == (
        b"HTTP/1.0 200 OK\r\n"
        b"Content-type: text/acl\r\n"
        b"Content-length: 4\r\n"
        b"Access-Control-Allow-Origin: *\r\n"
        b"Access-Control-Allow-Methods: POST, GET, OPTIONS\r\n"
        b"Access-Control-Allow-Headers: Content-Type\r\n"
        b"Access-Control-Allow-Age: 86400\r\n"
        b"\r\n"
        b"busy"
    )
    assert response_headers("")[2:] == list(CORS_HEADERS)
