// Package cacheconfig holds the types of [runners.cache]. It is named
// cacheconfig so that TOML type-mismatch errors name its types exactly as
// gitlab-runner does ("cacheconfig.Config", "cacheconfig.CacheS3Config", ...).
//
// Note that most keys here are CamelCase in config.toml (Type, Path, Shared,
// ServerAddress, ...), unlike the rest of the file. BurntSushi/toml falls back
// to a case-insensitive match, so "type" is accepted for "Type" too.
package cacheconfig

// Config is [runners.cache].
type Config struct {
	Type                   string            `toml:"Type"`
	Path                   string            `toml:"Path"`
	Shared                 bool              `toml:"Shared"`
	MaxUploadedArchiveSize int64             `toml:"MaxUploadedArchiveSize"`
	S3                     *CacheS3Config    `toml:"s3"`
	GCS                    *CacheGCSConfig   `toml:"gcs"`
	Azure                  *CacheAzureConfig `toml:"azure"`
}

// CacheS3Config is [runners.cache.s3].
type CacheS3Config struct {
	ServerAddress                       string `toml:"ServerAddress"`
	AccessKey                           string `toml:"AccessKey"`
	SecretKey                           string `toml:"SecretKey"`
	SessionToken                        string `toml:"SessionToken"`
	BucketName                          string `toml:"BucketName"`
	BucketLocation                      string `toml:"BucketLocation"`
	Insecure                            bool   `toml:"Insecure"`
	AuthenticationType                  string `toml:"AuthenticationType"`
	ServerSideEncryption                string `toml:"ServerSideEncryption"`
	ServerSideEncryptionKeyID           string `toml:"ServerSideEncryptionKeyID"`
	DualStack                           *bool  `toml:"DualStack"`
	PathStyle                           *bool  `toml:"PathStyle"`
	Accelerate                          bool   `toml:"Accelerate"`
	RoleARN                             string `toml:"RoleARN"`
	UploadRoleARN                       string `toml:"UploadRoleARN"`
	AssumeRoleMaxConcurrency            int    `toml:"AssumeRoleMaxConcurrency"`
	DisableAssumeRoleCredentialsCaching bool   `toml:"DisableAssumeRoleCredentialsCaching"`
}

// CacheGCSConfig is [runners.cache.gcs]; AccessID and PrivateKey come from an
// embedded credentials struct in the runner and are flattened here.
type CacheGCSConfig struct {
	AccessID        string `toml:"AccessID"`
	PrivateKey      string `toml:"PrivateKey"`
	CredentialsFile string `toml:"CredentialsFile"`
	BucketName      string `toml:"BucketName"`
	UniverseDomain  string `toml:"UniverseDomain"`
}

// CacheAzureConfig is [runners.cache.azure]; AccountName and AccountKey come
// from an embedded credentials struct in the runner and are flattened here.
type CacheAzureConfig struct {
	AccountName   string `toml:"AccountName"`
	AccountKey    string `toml:"AccountKey"`
	ContainerName string `toml:"ContainerName"`
	StorageDomain string `toml:"StorageDomain"`
}
