"""The one error listener resolution raises, carrying Kafka's own message.

Kafka 2.8 rejects a bad listener configuration with three different Java exceptions:

* ``org.apache.kafka.common.config.ConfigException`` -- a setting Kafka looked up and could not use
  (an unknown security protocol, an inter-broker listener name missing from the protocol map, ...);
* ``java.lang.IllegalArgumentException`` -- Scala's ``require(cond, msg)`` (its message starts with
  ``requirement failed: ``), and the ``Error creating broker listeners from '...'`` wrapper around a
  listener list that would not parse;
* ``org.apache.kafka.common.KafkaException`` -- raised inside that wrapper for an entry that is not
  ``NAME://host:port``.

Here they are one Python class, :class:`ConfigException`, whose ``str()`` is Kafka's message
character for character; which Java class Kafka threw is kept in :attr:`ConfigException.kafka_exception`
and the setting at fault in :attr:`ConfigException.config_key`.
"""

from __future__ import annotations

__all__ = ["ConfigException"]


class ConfigException(ValueError):
    """A broker configuration Kafka 2.8 refuses to start with.

    ``str(exc)`` is Kafka's message. ``kafka_exception`` is the simple name of the Java class Kafka
    throws (``"ConfigException"``, ``"IllegalArgumentException"``, ...), ``config_key`` the Kafka
    property the message is about, and ``inner_exception`` the class of the error a wrapper message
    wraps (``"KafkaException"`` for ``Unable to parse ...``), else None.
    """

    def __init__(self, message: str, *, kafka_exception: str, config_key: str, inner_exception: str | None = None):
        super().__init__(message)
        self.message = message
        self.kafka_exception = kafka_exception
        self.config_key = config_key
        self.inner_exception = inner_exception

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return (
            f"ConfigException({self.message!r}, kafka_exception={self.kafka_exception!r}, "
            f"config_key={self.config_key!r})"
        )


def require(cond: bool, message: str, config_key: str) -> None:
    """Scala's ``require``: an IllegalArgumentException whose message starts ``requirement failed: ``."""
    if not cond:
        raise ConfigException(
            "requirement failed: " + message, kafka_exception="IllegalArgumentException", config_key=config_key
        )
