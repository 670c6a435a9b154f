"""Security on the request path (Kafka's SaslServerAuthenticator, AuthHelper and the
authorizer's change listener): the SASL stage of a connection, authorization checks for
handlers, ACL change notifications and the SCRAM credential cache.
"""
