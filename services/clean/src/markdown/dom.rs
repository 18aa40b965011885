//! A flat, read-only view of a parsed document that every later pass walks without recursion.
//!
//! Nodes are stored in document (pre-)order, so the subtree of node `i` is the index range
//! `i..end`: its children are found by hopping from `i + 1` over each child's range, and
//! bottom-up measures (text length, link text, boilerplate) are one loop over the indices in
//! reverse. Script, style and template contents, comments and doctypes are left out here, so no
//! pass has to skip them again.

use scraper::{ElementRef, Node};

/// Element names the extractor and the renderer tell apart; everything else is [`Tag::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub(crate) enum Tag {
    #[strum(disabled)]
    Text,
    #[strum(disabled)]
    Other,
    Html,
    Head,
    Body,
    Title,
    Meta,
    Link,
    Base,
    P,
    Div,
    Section,
    Article,
    Main,
    Header,
    Footer,
    Aside,
    Nav,
    Figure,
    Figcaption,
    Address,
    Details,
    Summary,
    Dl,
    Dt,
    Dd,
    Center,
    Hgroup,
    Form,
    Fieldset,
    Li,
    Ul,
    Ol,
    Table,
    Thead,
    Tbody,
    Tfoot,
    Tr,
    Td,
    Th,
    Caption,
    Legend,
    Option,
    H1,
    H2,
    H3,
    H4,
    H5,
    H6,
    Pre,
    Code,
    Kbd,
    Samp,
    Tt,
    Em,
    I,
    Cite,
    Dfn,
    Strong,
    B,
    A,
    Br,
    Hr,
    Blockquote,
    Span,
    Font,
    Svg,
    Math,
    Canvas,
    Iframe,
    Object,
    Embed,
    Video,
    Audio,
    Img,
    Picture,
    Input,
    Select,
    Textarea,
    Button,
    Map,
    Dialog,
}

impl Tag {
    fn of(name: &str) -> Tag {
        name.parse().unwrap_or(Tag::Other)
    }
}

impl Tag {
    /// Heading level 1–6, 0 for anything else.
    pub(crate) fn heading_level(self) -> usize {
        match self {
            Tag::H1 => 1,
            Tag::H2 => 2,
            Tag::H3 => 3,
            Tag::H4 => 4,
            Tag::H5 => 5,
            Tag::H6 => 6,
            _ => 0,
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Data<'a> {
    Element(ElementRef<'a>),
    Text(&'a str),
}

pub(crate) struct Item<'a> {
    pub(crate) data: Data<'a>,
    pub(crate) tag: Tag,
    /// Index of the parent; the root is its own parent.
    pub(crate) parent: u32,
    /// One past the last node of this node's subtree.
    pub(crate) end: u32,
}

pub(crate) struct Dom<'a> {
    pub(crate) items: Vec<Item<'a>>,
}

impl<'a> Dom<'a> {
    /// Flatten `root` and everything below it.
    pub(crate) fn new(root: ElementRef<'a>) -> Dom<'a> {
        let mut items = vec![Item {
            data: Data::Element(root),
            tag: Tag::of(root.value().name()),
            parent: 0,
            end: 1,
        }];
        // Open elements, innermost last; a node's parent is the top of this stack.
        let mut open: Vec<u32> = vec![0];
        let mut next = root.first_child();
        loop {
            let Some(node) = next else {
                let Some(done) = open.pop() else { break };
                let len = items.len() as u32;
                items[done as usize].end = len;
                if open.is_empty() {
                    break;
                }
                next = match items[done as usize].data {
                    Data::Element(e) => e.next_sibling(),
                    Data::Text(_) => None,
                };
                continue;
            };
            let parent = *open.last().expect("an open element");
            let index = items.len() as u32;
            match node.value() {
                Node::Text(t) => items.push(Item {
                    data: Data::Text(t),
                    tag: Tag::Text,
                    parent,
                    end: index + 1,
                }),
                Node::Element(el) => {
                    let name = el.name();
                    // Never text of the page; leaving them out here spares every pass a check.
                    if !matches!(name, "script" | "style" | "template") {
                        let e = ElementRef::wrap(node).expect("element node");
                        items.push(Item {
                            data: Data::Element(e),
                            tag: Tag::of(name),
                            parent,
                            end: index + 1,
                        });
                        if let Some(child) = node.first_child() {
                            open.push(index);
                            next = Some(child);
                            continue;
                        }
                    }
                }
                _ => {}
            }
            next = node.next_sibling();
        }
        Dom { items }
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn tag(&self, i: usize) -> Tag {
        self.items[i].tag
    }

    pub(crate) fn end(&self, i: usize) -> usize {
        self.items[i].end as usize
    }

    /// The parent of `i`, `None` for the root.
    pub(crate) fn parent(&self, i: usize) -> Option<usize> {
        let p = self.items[i].parent as usize;
        (p != i).then_some(p)
    }

    pub(crate) fn element(&self, i: usize) -> Option<ElementRef<'a>> {
        match self.items[i].data {
            Data::Element(e) => Some(e),
            Data::Text(_) => None,
        }
    }

    pub(crate) fn text(&self, i: usize) -> Option<&'a str> {
        match self.items[i].data {
            Data::Text(t) => Some(t),
            Data::Element(_) => None,
        }
    }

    /// An attribute by name. A scan of the element's few attributes is cheaper than scraper's
    /// `attr`, which interns `name` on every call.
    pub(crate) fn attr(&self, i: usize, name: &str) -> Option<&'a str> {
        let e = self.element(i)?;
        e.value().attrs().find(|&(k, _)| k == name).map(|(_, v)| v)
    }

    /// Direct children of `i`, text nodes included.
    pub(crate) fn children(&self, i: usize) -> Children<'_, 'a> {
        Children {
            dom: self,
            next: i + 1,
            end: self.end(i),
        }
    }

    /// Direct element children of `i`.
    pub(crate) fn child_elements(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.children(i).filter(|&c| self.items[c].tag != Tag::Text)
    }

    /// Ancestors of `i`, nearest first, `i` excluded.
    pub(crate) fn ancestors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.parent(i), |&p| self.parent(p))
    }

    /// All text below `i` (skipped nodes included), concatenated as written.
    pub(crate) fn text_of(&self, i: usize) -> String {
        (i..self.end(i)).filter_map(|j| self.text(j)).collect()
    }
}

pub(crate) struct Children<'d, 'a> {
    dom: &'d Dom<'a>,
    next: usize,
    end: usize,
}

impl Iterator for Children<'_, '_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        (self.next < self.end).then(|| {
            let c = self.next;
            self.next = self.dom.end(c);
            c
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scraper::Html;

    #[test]
    fn preorder_ranges_and_children() {
        let doc = Html::parse_fragment(
            "<div><p>a<b>b</b></p><script>x</script><!-- c --><ul><li>c</li></ul>d</div>",
        );
        let dom = Dom::new(doc.root_element());
        let div = (0..dom.len()).find(|&i| dom.tag(i) == Tag::Div).unwrap();
        let kids: Vec<Tag> = dom.children(div).map(|c| dom.tag(c)).collect();
        assert_eq!(kids, [Tag::P, Tag::Ul, Tag::Text]);
        assert_eq!(dom.text_of(div), "abcd");
        let li = (0..dom.len()).find(|&i| dom.tag(i) == Tag::Li).unwrap();
        let up: Vec<Tag> = dom.ancestors(li).map(|a| dom.tag(a)).collect();
        assert_eq!(&up[..3], [Tag::Ul, Tag::Div, Tag::Html]);
        assert_eq!(dom.end(0), dom.len());
    }
}
