"""Webhooks: endpoints, events, deliveries, the way out, secrets at rest."""
