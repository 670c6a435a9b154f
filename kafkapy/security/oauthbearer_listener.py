"""Which OAUTHBEARER validator a SASL listener uses, chosen from its settings as Kafka's
SaslChannelBuilder chooses the server callback handler for the mechanism:

* the listener's OAUTHBEARER JAAS line (``listener.name.<l>.oauthbearer.sasl.jaas.config``, an
  OAuthBearerLoginModule entry) is required, as on Kafka;
* no ``listener.name.<l>.oauthbearer.sasl.server.callback.handler.class``: Kafka's unsecured
  validator, its options from the JAAS line (kafkapy.security.oauthbearer_unsecured);
* OAuthBearerValidatorCallbackHandler: JWTs checked against the JWKS
  (kafkapy.security.oauthbearer_jwt);
* any other class cannot be loaded by kafkapy: the broker refuses to start, naming it.
"""

from __future__ import annotations

from collections.abc import Mapping

from .oauthbearer import (
    OAUTHBEARER_LOGIN_MODULE,
    UNSECURED_VALIDATOR_CALLBACK_HANDLER,
    VALIDATOR_CALLBACK_HANDLER,
    TokenValidator,
)
from .oauthbearer_jwt import OAuthConfigError, build_jwt_validator
from .oauthbearer_unsecured import UnsecuredConfigError, UnsecuredValidator

CALLBACK_HANDLER_KEY = "oauthbearer.sasl.server.callback.handler.class"


class OAuthListenerConfigError(ValueError):
    """The listener's OAUTHBEARER settings are unusable (one line)."""


def oauthbearer_validator(
    settings: Mapping[str, str], listener: str, jaas_options: dict[str, str] | None
) -> TokenValidator:
    """The listener's token validator (see the module doc)."""
    jaas_key = f"listener.name.{listener.lower()}.oauthbearer.sasl.jaas.config"
    text = settings.get("oauthbearer.sasl.jaas.config") or ""
    if jaas_options is None or OAUTHBEARER_LOGIN_MODULE not in text:
        raise OAuthListenerConfigError(
            f"Could not find a 'KafkaServer' or '{listener.lower()}.KafkaServer' entry in the "
            f"JAAS configuration for OAUTHBEARER: set {jaas_key} to "
            f"'{OAUTHBEARER_LOGIN_MODULE} required;'"
        )
    handler = (settings.get(CALLBACK_HANDLER_KEY) or "").strip()
    try:
        if handler in ("", UNSECURED_VALIDATOR_CALLBACK_HANDLER):
            return UnsecuredValidator(jaas_options)
        if handler == VALIDATOR_CALLBACK_HANDLER:
            return build_jwt_validator(settings)
    except (OAuthConfigError, UnsecuredConfigError) as e:
        raise OAuthListenerConfigError(f"listener {listener}: {e}") from None
    raise OAuthListenerConfigError(
        f"Invalid value {handler} for configuration listener.name.{listener.lower()}."
        f"{CALLBACK_HANDLER_KEY}: kafkapy serves {VALIDATOR_CALLBACK_HANDLER} and Kafka's "
        "unsecured validator (no class set), not other classes"
    )
