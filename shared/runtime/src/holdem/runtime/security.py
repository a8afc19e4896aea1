"""A KafkaConnection as faststream's ``security=`` object (its KafkaBroker takes no raw kwargs)."""

from __future__ import annotations

from faststream.security import (
    BaseSecurity,
    SASLPlaintext,
    SASLScram256,
    SASLScram512,
)

from holdem.core.wire.connection import KafkaConnection

_SASL = {"SCRAM-SHA-512": SASLScram512, "SCRAM-SHA-256": SASLScram256, "PLAIN": SASLPlaintext}


def faststream_security(connection: KafkaConnection) -> BaseSecurity | None:
    """The security faststream's KafkaBroker needs to connect as ``connection`` does.

    >>> faststream_security(KafkaConnection("h:1")) is None
    True
    >>> type(faststream_security(KafkaConnection("h:1", "SASL_PLAINTEXT", "SCRAM-SHA-512",
    ...     "dealer", "pw"))).__name__
    'SASLScram512'
    """
    if not connection.uses_sasl and not connection.uses_tls:
        return None
    ssl_context = connection.kwargs().get("ssl_context")
    if not connection.uses_sasl:
        return BaseSecurity(ssl_context=ssl_context, use_ssl=True)
    kind = _SASL[connection.sasl_mechanism or ""]
    assert connection.username is not None and connection.password is not None  # checked by it
    return kind(
        connection.username,
        connection.password,
        ssl_context=ssl_context,
        use_ssl=connection.uses_tls,
    )
