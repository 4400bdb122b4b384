package config

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// Encrypted private keys, as tls-key-file-pass and
// tls-client-key-file-pass unlock them. crypto/x509 reads only the old
// "Proc-Type: 4,ENCRYPTED" PEM form; OpenSSL 1.1 and 3 write PKCS#8
// ("ENCRYPTED PRIVATE KEY", RFC 5958) with PBES2 (RFC 8018): a key
// derived from the passphrase with PBKDF2 and a block cipher in CBC mode.
// That is what is implemented here, with the PRFs and ciphers OpenSSL
// offers for it; scrypt and the PKCS#5 v1.5 and PKCS#12 schemes are not,
// and are refused by name.

var (
	oidPBES2        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2       = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidScrypt       = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11591, 4, 11}
	oidHMACWithSHA1 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidDESEDE3CBC   = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

// pbkdf2PRFs are PBKDF2's pseudo-random functions by the OID of their HMAC.
var pbkdf2PRFs = map[string]func() hash.Hash{
	oidHMACWithSHA1.String(): sha1.New,
	"1.2.840.113549.2.8":     sha256.New224,
	"1.2.840.113549.2.9":     sha256.New,
	"1.2.840.113549.2.10":    sha512.New384,
	"1.2.840.113549.2.11":    sha512.New,
	"1.2.840.113549.2.12":    sha512.New512_224,
	"1.2.840.113549.2.13":    sha512.New512_256,
}

// pbes2Ciphers are the CBC ciphers by OID, with their key sizes.
var pbes2Ciphers = map[string]struct {
	keyLen int
	block  func(key []byte) (cipher.Block, error)
}{
	"2.16.840.1.101.3.4.1.2":  {16, aes.NewCipher},
	"2.16.840.1.101.3.4.1.22": {24, aes.NewCipher},
	"2.16.840.1.101.3.4.1.42": {32, aes.NewCipher},
	oidDESEDE3CBC.String():    {24, des.NewTripleDESCipher},
}

// maxPBKDF2Iterations bounds the work a key file can ask for: OpenSSL 3
// uses 2048, and a million is already seconds of CPU.
const maxPBKDF2Iterations = 10_000_000

type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type encryptedPrivateKeyInfo struct {
	Algorithm     algorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KeyDerivationFunc algorithmIdentifier
	EncryptionScheme  algorithmIdentifier
}

type pbkdf2Params struct {
	Salt           []byte
	IterationCount int
	KeyLength      int                 `asn1:"optional"`
	PRF            algorithmIdentifier `asn1:"optional"`
}

// decryptPEMKey returns keyPEM with its first private key decrypted by
// pass, or keyPEM as it is if that key is not encrypted.
func decryptPEMKey(keyPEM []byte, pass string) ([]byte, error) {
	rest := keyPEM
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return keyPEM, nil // tls.X509KeyPair says what is missing
		}
		switch {
		case block.Type == "ENCRYPTED PRIVATE KEY":
			if pass == "" {
				return nil, errors.New("the private key is encrypted and no passphrase is set (tls-key-file-pass)")
			}
			der, err := decryptPKCS8(block.Bytes, pass)
			if err != nil {
				return nil, err
			}
			return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
		case x509.IsEncryptedPEMBlock(block): //lint:ignore SA1019 the old form is still what some tools write; its weakness is the file's, not ours
			if pass == "" {
				return nil, errors.New("the private key is encrypted and no passphrase is set (tls-key-file-pass)")
			}
			der, err := x509.DecryptPEMBlock(block, []byte(pass)) //lint:ignore SA1019 as above
			if err != nil {
				return nil, fmt.Errorf("decrypting the private key: %w (wrong passphrase?)", err)
			}
			return pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: der}), nil
		case strings.HasSuffix(block.Type, "PRIVATE KEY"):
			return keyPEM, nil
		}
	}
}

// decryptPKCS8 decrypts a DER EncryptedPrivateKeyInfo into the DER of the
// PKCS#8 PrivateKeyInfo it holds.
func decryptPKCS8(der []byte, pass string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("the encrypted private key does not parse: %v", err)
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("the private key is encrypted with scheme %s; only PBES2 (OpenSSL's default since 1.1) is supported", info.Algorithm.Algorithm)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("the encrypted private key's PBES2 parameters do not parse: %v", err)
	}
	kdf := params.KeyDerivationFunc
	if kdf.Algorithm.Equal(oidScrypt) {
		return nil, errors.New("the private key's passphrase is derived with scrypt; only PBKDF2 (OpenSSL's default) is supported")
	}
	if !kdf.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("the private key's passphrase is derived with %s; only PBKDF2 is supported", kdf.Algorithm)
	}
	var kp pbkdf2Params
	if _, err := asn1.Unmarshal(kdf.Parameters.FullBytes, &kp); err != nil {
		return nil, fmt.Errorf("the encrypted private key's PBKDF2 parameters do not parse: %v", err)
	}
	if kp.IterationCount < 1 || kp.IterationCount > maxPBKDF2Iterations {
		return nil, fmt.Errorf("the private key's PBKDF2 iteration count %d is outside 1 to %d", kp.IterationCount, maxPBKDF2Iterations)
	}
	prf := sha1.New // the default PRF, hmacWithSHA1
	if len(kp.PRF.Algorithm) > 0 {
		if prf = pbkdf2PRFs[kp.PRF.Algorithm.String()]; prf == nil {
			return nil, fmt.Errorf("the private key's PBKDF2 uses PRF %s, which is not supported", kp.PRF.Algorithm)
		}
	}
	scheme, ok := pbes2Ciphers[params.EncryptionScheme.Algorithm.String()]
	if !ok {
		return nil, fmt.Errorf("the private key is encrypted with cipher %s; AES-CBC and DES-EDE3-CBC are supported", params.EncryptionScheme.Algorithm)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.EncryptionScheme.Parameters.FullBytes, &iv); err != nil {
		return nil, fmt.Errorf("the encrypted private key's IV does not parse: %v", err)
	}
	if kp.KeyLength != 0 && kp.KeyLength != scheme.keyLen {
		return nil, fmt.Errorf("the private key's PBKDF2 key length %d does not fit its cipher's %d", kp.KeyLength, scheme.keyLen)
	}
	key, err := pbkdf2.Key(prf, pass, kp.Salt, kp.IterationCount, scheme.keyLen)
	if err != nil {
		return nil, fmt.Errorf("deriving the private key's key: %v", err)
	}
	block, err := scheme.block(key)
	if err != nil {
		return nil, err
	}
	data := info.EncryptedData
	if len(iv) != block.BlockSize() || len(data) == 0 || len(data)%block.BlockSize() != 0 {
		return nil, errors.New("the encrypted private key's IV or data have the wrong length")
	}
	plain := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, data)
	if plain, ok = unpad(plain, block.BlockSize()); !ok {
		return nil, errors.New("decrypting the private key: wrong passphrase (bad padding)")
	}
	if _, err := x509.ParsePKCS8PrivateKey(plain); err != nil {
		return nil, fmt.Errorf("decrypting the private key: wrong passphrase (%v)", err)
	}
	return plain, nil
}

// unpad removes PKCS#7 padding.
func unpad(p []byte, blockSize int) ([]byte, bool) {
	n := int(p[len(p)-1])
	if n == 0 || n > blockSize || n > len(p) || !bytes.Equal(p[len(p)-n:], bytes.Repeat([]byte{byte(n)}, n)) {
		return nil, false
	}
	return p[:len(p)-n], true
}
