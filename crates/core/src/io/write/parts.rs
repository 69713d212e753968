//! The chunks handed to the multipart writer: borrowed (copied into the part) or owned (kept by
//! reference).

use bytes::Bytes;
use object_store::PutPayloadMut;

use super::upload::Upload;

/// Data handed to the writer: borrowed (copied into the part) or owned (kept by reference).
pub(super) enum Chunk<'a> {
    Slice(&'a [u8]),
    Owned(Bytes),
}

impl Chunk<'_> {
    pub(super) fn len(&self) -> usize {
        match self {
            Chunk::Slice(s) => s.len(),
            Chunk::Owned(b) => b.len(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first `n` bytes; `self` keeps the rest.
    pub(super) fn split_to(&mut self, n: usize) -> Self {
        match self {
            Chunk::Slice(s) => {
                let (head, tail) = s.split_at(n);
                *s = tail;
                Chunk::Slice(head)
            }
            Chunk::Owned(b) => Chunk::Owned(b.split_to(n)),
        }
    }

    pub(super) fn append_to(self, buffer: &mut PutPayloadMut) {
        match self {
            Chunk::Slice(s) => buffer.extend_from_slice(s),
            Chunk::Owned(b) => buffer.push(b),
        }
    }

    pub(super) fn append_to_upload(self, upload: &mut Upload) {
        match self {
            Chunk::Slice(s) => upload.write(s),
            Chunk::Owned(b) => upload.put(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::WriteMode;

    fn not_found() -> object_store::Error {
        object_store::Error::NotFound {
            path: "p".into(),
            source: "404 NoSuchKey".into(),
        }
    }

    #[test]
    fn an_if_match_write_of_a_missing_object_is_a_precondition_failure_whatever_the_status() {
        let e = WriteMode::IfMatch("\"e\"".into()).refusal(not_found());
        assert!(matches!(e, object_store::Error::Precondition { .. }), "{e}");
        assert_eq!(crate::Error::from(e).kind(), crate::ErrorKind::Precondition);
        let e = WriteMode::Overwrite.refusal(not_found());
        assert!(matches!(e, object_store::Error::NotFound { .. }), "{e}");
        let e = WriteMode::Create.refusal(not_found());
        assert!(matches!(e, object_store::Error::NotFound { .. }), "{e}");
    }
}
