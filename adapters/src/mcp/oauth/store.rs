//! Tokens kept between runs: one JSON file per source, readable by its owner only.
//!
//! The file is created with mode 0600 inside a directory created with mode 0700, and written
//! whole to a temporary file in the same directory then renamed over the old one, so a crash
//! mid-write never leaves half a token file and no other user ever sees one. Its contents are
//! never logged (rmcp's `StoredCredentials` redacts the token in `Debug`).

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};

/// A [`CredentialStore`] in one file.
#[derive(Debug, Clone)]
pub(crate) struct FileCredentialStore {
    path: PathBuf,
}

impl FileCredentialStore {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// The default file of `source`: `<config dir>/otc-bridge/tokens/<source>.json`
    /// (`~/.config` on Linux, `~/Library/Application Support` on macOS).
    pub(crate) fn default_path(source: &str) -> Option<PathBuf> {
        let safe: String = source
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        dirs::config_dir().map(|dir| {
            dir.join("otc-bridge")
                .join("tokens")
                .join(format!("{safe}.json"))
        })
    }

    #[cfg(test)]
    fn path(&self) -> &Path {
        &self.path
    }

    fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        write_private(&self.path, bytes)
    }
}

/// Writes `bytes` to `path`, readable by its owner only, whole or not at all: through a
/// temporary file in the same directory, created exclusively (`O_CREAT | O_EXCL`, so a symlink
/// planted in a shared directory is never followed) with a random name and mode 0600, then
/// renamed over `path` (a symlink at `path` itself is replaced, not followed).
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::Builder::new()
        .prefix(".otc-bridge-")
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn store_error(what: &str, path: &Path, error: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!("cannot {what} {}: {error}", path.display()))
}

#[async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match crate::file::read(&self.path, crate::file::MAX_CONFIG_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| store_error("read the tokens in", &self.path, e)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(store_error("read", &self.path, error)),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let bytes = serde_json::to_vec_pretty(&credentials)
            .map_err(|e| store_error("write the tokens to", &self.path, e))?;
        self.write(&bytes)
            .map_err(|e| store_error("write", &self.path, e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(store_error("remove", &self.path, error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[tokio::test]
    async fn tokens_round_trip_in_a_file_only_its_owner_can_read() {
        // A fresh directory: one named after the pid alone could hold an earlier test's tokens.
        let dir = tempfile::Builder::new()
            .prefix("otc-store-")
            .tempdir()
            .unwrap()
            .keep();
        let store = FileCredentialStore::new(dir.join("nested/source.json"));
        assert!(store.load().await.unwrap().is_none());
        let credentials =
            StoredCredentials::new("client-1".into(), None, vec!["read".into()], Some(1));
        store.save(credentials).await.unwrap();
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(dir.join("nested"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let loaded = store.load().await.unwrap().unwrap();
        assert_eq!(loaded.client_id, "client-1");
        assert_eq!(loaded.granted_scopes, ["read"]);
        store.clear().await.unwrap();
        assert!(store.load().await.unwrap().is_none());
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Issue 25, item 11: in a directory others can write, a symlink planted where the token's
    /// temporary file used to be created (`.<name>.<pid>.tmp`) must not receive the token.
    #[tokio::test]
    async fn a_planted_symlink_never_receives_the_token() {
        let dir = tempfile::Builder::new()
            .prefix("otc-store-shared-")
            .tempdir()
            .unwrap()
            .keep();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let stolen = dir.join("attacker-readable");
        std::fs::write(&stolen, b"").unwrap();
        let planted = dir.join(format!(".tokens.json.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&stolen, &planted).unwrap();

        let store = FileCredentialStore::new(dir.join("tokens.json"));
        let credentials =
            StoredCredentials::new("client-secret-id".into(), None, Vec::new(), Some(1));
        store.save(credentials).await.unwrap();

        assert_eq!(
            std::fs::read(&stolen).unwrap(),
            b"",
            "the token followed a symlink"
        );
        let written = std::fs::symlink_metadata(dir.join("tokens.json")).unwrap();
        assert!(written.file_type().is_file());
        assert_eq!(written.permissions().mode() & 0o777, 0o600);
        assert!(store.load().await.unwrap().is_some());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_default_file_is_per_source_and_safe_to_name() {
        let path = FileCredentialStore::default_path("../evil source").unwrap();
        assert!(
            path.ends_with("otc-bridge/tokens/___evil_source.json"),
            "{}",
            path.display()
        );
    }
}
