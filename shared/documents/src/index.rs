//! The tantivy index of a root's chunks: built whole in a local directory from every file's
//! chunks, searched with BM25 over the chunk's text and its file's title (English stems), and
//! answered one hit per file, at the page of its best chunk.

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, STORED, STRING,
};
use tantivy::{doc, Index, IndexReader, TantivyDocument};

use crate::chunk::Chunk;

/// The indexing memory budget: tantivy's writer takes at least 15 MB a thread.
const WRITER_BYTES: usize = 50_000_000;

/// Chunks read per hit wanted: a file's chunks crowd each other in the ranking.
const CHUNKS_PER_HIT: usize = 8;

/// Longest snippet of a hit, in bytes.
const SNIPPET_CHARS: usize = 300;

/// One file as the index takes it (and as its chunks are kept in the object store).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct IndexedFile {
    /// Its path under the root.
    pub name: String,
    pub title: String,
    pub chunks: Vec<Chunk>,
}

/// A file that matched a query, at its best chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Its path under the root.
    pub name: String,
    pub title: String,
    /// The best chunk's page, for a file with pages.
    pub page: Option<u32>,
    /// The start of the best chunk.
    pub snippet: String,
    pub score: f32,
}

struct Fields {
    name: Field,
    title: Field,
    page: Field,
    text: Field,
}

fn schema() -> (Schema, Fields) {
    let stemmed = TextOptions::default().set_stored().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("en_stem")
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let mut builder = Schema::builder();
    let fields = Fields {
        name: builder.add_text_field("name", STRING | STORED),
        title: builder.add_text_field("title", stemmed.clone()),
        page: builder.add_u64_field("page", STORED),
        text: builder.add_text_field("text", stemmed),
    };
    (builder.build(), fields)
}

/// Builds the index of `files` in `dir` (empty, existing).
pub fn build(dir: &Path, files: impl IntoIterator<Item = IndexedFile>) -> tantivy::Result<()> {
    let (schema, f) = schema();
    let index = Index::create_in_dir(dir, schema)?;
    let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, WRITER_BYTES)?;
    for file in files {
        for chunk in &file.chunks {
            writer.add_document(doc!(
                f.name => file.name.as_str(),
                f.title => file.title.as_str(),
                f.page => u64::from(chunk.page.unwrap_or(0)),
                f.text => chunk.text.as_str(),
            ))?;
        }
    }
    writer.commit()?;
    writer.wait_merging_threads()
}

/// An index opened for search.
pub struct Searchable {
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

impl Searchable {
    pub fn open(dir: &Path) -> tantivy::Result<Searchable> {
        let index = Index::open_in_dir(dir)?;
        let reader = index.reader()?;
        Ok(Searchable {
            index,
            reader,
            fields: schema().1,
        })
    }

    /// The files that best match `query` (the question as written: operators a user did not
    /// mean are read as words), one hit each, best first, at most `limit`.
    pub fn search(&self, query: &str, limit: usize) -> tantivy::Result<Vec<Hit>> {
        let f = &self.fields;
        let parser = QueryParser::for_index(&self.index, vec![f.title, f.text]);
        let (query, _unread) = parser.parse_query_lenient(query);
        let searcher = self.reader.searcher();
        let top = searcher.search(
            &query,
            &TopDocs::with_limit(limit.max(1) * CHUNKS_PER_HIT).order_by_score(),
        )?;
        let mut hits: Vec<Hit> = Vec::new();
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address)?;
            let text = |field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            let name = text(f.name);
            if hits.iter().any(|h| h.name == name) {
                continue;
            }
            let page = (doc.get_first(f.page).and_then(|v| v.as_u64()))
                .and_then(|p| u32::try_from(p).ok())
                .filter(|&p| p > 0);
            let body = text(f.text);
            let cut = trawl_text::floor_char_boundary(&body, SNIPPET_CHARS);
            hits.push(Hit {
                name,
                title: text(f.title),
                page,
                snippet: body[..cut].to_owned(),
                score,
            });
            if hits.len() == limit {
                break;
            }
        }
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(page: Option<u32>, text: &str) -> Chunk {
        Chunk {
            page,
            text: text.into(),
        }
    }

    #[test]
    fn a_file_is_found_by_its_words_stemmed_at_its_best_page() {
        let dir = tempfile::tempdir().unwrap();
        let filing = vec![
            chunk(Some(1), "Harlow Dynamics reviewed its segments."),
            chunk(
                Some(240),
                "At the end of 2023 Harlow Dynamics employed 18,420 people.",
            ),
        ];
        let notes = vec![chunk(None, "The kestrel survey counted breeding pairs.")];
        let file = |name: &str, title: &str, chunks| IndexedFile {
            name: name.into(),
            title: title.into(),
            chunks,
        };
        let files = [
            file(
                "filings/harlow.pdf",
                "Harlow Dynamics Annual Report",
                filing,
            ),
            file("notes.md", "Field notes", notes),
        ];
        build(dir.path(), files).unwrap();
        let index = Searchable::open(dir.path()).unwrap();
        // "employ" finds "employed"; the question's "?" and ":" are words, not syntax.
        let hits = index
            .search("How many people did Harlow Dynamics employ: in 2023?", 5)
            .unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].name, "filings/harlow.pdf");
        assert_eq!(hits[0].page, Some(240));
        assert!(hits[0].snippet.contains("18,420"));
        let hits = index.search("kestrels breeding", 5).unwrap();
        assert_eq!((hits[0].name.as_str(), hits[0].page), ("notes.md", None));
        assert!(index.search("zeppelin", 5).unwrap().is_empty());
    }
}
