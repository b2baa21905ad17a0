-- Phase 1: Check all keys are available
  for i = 1, #KEYS do
    if redis.call("EXISTS", KEYS[i]) == 1 then
      return {0, i, KEYS[i]}
    end
  end

  -- Phase 2: All keys available, acquire atomically
  local ttl = tonumber(ARGV[#ARGV])
  for i = 1, #KEYS do
    redis.call("SET", KEYS[i], ARGV[i], "PX", ttl)
  end

  return {1, #KEYS}