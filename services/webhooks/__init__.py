"""Webhooks: endpoints users manage, the event outbox, deliveries and the one way out to the
internet."""
