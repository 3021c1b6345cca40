"""Pick alerts: subscriptions users manage, their outbox and its delivery by email and Telegram."""
