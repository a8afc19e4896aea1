"""Operating a deployment: topics and ACLs, tenants, the local broker from Maven jars, the service
launcher and `make serve`. Used by operators and by the harness; never by a service."""
