from redis_server import redis_server, redis_url

__all__ = ["redis_server", "redis_url"]
