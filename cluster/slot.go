package cluster

// Slots is the number of hash slots of a Redis cluster.
const Slots = 16384

// crc16Table is CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0),
// the checksum Redis Cluster hashes keys with.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^c]
	}
	return crc
}

// KeySlot returns the hash slot of key: CRC16 of the key modulo 16384, or
// of its hash tag, the bytes between the first '{' and the next '}' when
// there are some, so that {user1}.name and {user1}.mail share a slot.
func KeySlot(key []byte) int {
	for i, c := range key {
		if c != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 {
					break // "{}": the whole key is hashed
				}
				return int(crc16(key[i+1:j]) & (Slots - 1))
			}
		}
		break
	}
	return int(crc16(key) & (Slots - 1))
}
