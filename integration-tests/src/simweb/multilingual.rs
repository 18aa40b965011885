//! The multilingual family, for measuring reports by language (`scripts/bench-reports`): the
//! same four kinds of question (a bridge's length, a mountain's height, a metal's melting
//! point, a town's founding year) about five invented subjects each, in English, German,
//! French, Spanish, Chinese, Japanese, Russian and Arabic. Every language's questions have the
//! same shape, so what differs between languages is the language alone.
//!
//! For each question: two answer pages stating the value in different words, a page naming the
//! subject without the value, and, for one subject of each kind, a third answer page stating
//! another value (the sources disagree). Each language also has pages on other things. Pages
//! are padded with sentences about the region that name no subject, as articles are.
//!
//! Sentences are written as the language's people write them, not word for word: the
//! question's words come back in other forms ("lang" / "Länge", "длина" / "длиной"), French
//! elides its articles ("l'altitude", "d'altitude"), Chinese and Japanese leave no spaces.
//! Subjects' names are invented in each language's script.

use std::collections::BTreeSet;

use super::render::{Block, Doc};
use super::rng::Rng;
use super::words::Namer;

/// Subjects per kind of question in each language.
pub const SUBJECTS_PER_KIND: usize = 5;
/// Which subject of each kind has a page that disagrees.
const DISAGREEING: usize = 2;
/// What the disagreeing page adds to the value.
const DISAGREEMENT: u64 = 13;

/// One kind of question in one language. `{S}` is the subject's name, `{V}` the value.
struct Kind {
    question: &'static str,
    /// The two answer pages' titles, then the page naming the subject.
    titles: [&'static str; 3],
    /// Sentences naming the subject without the value, one for each answer page.
    intro: [&'static str; 2],
    /// The value's sentence on each answer page.
    value: [&'static str; 2],
    /// The page naming the subject: two sentences without the value.
    mention: [&'static str; 2],
}

/// The value's range of each kind, in the order of [`Language::kinds`]: metres, metres, degrees
/// Celsius, a year.
const RANGES: [(u64, u64); 4] = [(300, 2400), (1200, 4800), (600, 3200), (1100, 1890)];

/// How a language writes invented names.
#[derive(Clone, Copy)]
enum Script {
    Latin,
    Cyrillic,
    Arabic,
    Han,
    Katakana,
}

pub struct Language {
    /// ISO 639-1 code, as `<html lang>` and trawl's `language` name it.
    pub code: &'static str,
    script: Script,
    /// Bridge, mountain, metal, town.
    kinds: [Kind; 4],
    /// Sentences about the region, naming no subject and stating no number.
    filler: [&'static str; 8],
    /// Titles of pages on other things.
    others: [&'static str; 3],
}

/// One question of the family, with its pages as documents.
pub struct Item {
    pub lang: &'static str,
    /// `ml-<lang>-<kind>-<subject>`.
    pub topic: String,
    pub question: String,
    pub value: String,
    /// Answer pages (the disagreeing one last), then the page naming the subject.
    pub docs: Vec<(Role, Doc)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Answer,
    Disagrees,
    Mention,
}

/// Every language's questions, then each language's other pages. No subject is given a name
/// for which `taken` is true (a name other pages already use).
pub fn items(rng: &mut Rng, taken: impl Fn(&str) -> bool) -> (Vec<Item>, Vec<(&'static str, Doc)>) {
    let mut namer = Names::default();
    let mut items = Vec::new();
    let mut others = Vec::new();
    for lang in LANGUAGES {
        for (k, kind) in lang.kinds.iter().enumerate() {
            for s in 0..SUBJECTS_PER_KIND {
                let name = loop {
                    let name = namer.name(lang.script, rng);
                    if !taken(&name) {
                        break name;
                    }
                };
                let (lo, hi) = RANGES[k];
                let value = rng.range(lo, hi);
                let fill = |rng: &mut Rng| lang.filler[rng.index(lang.filler.len())];
                let put = |t: &str, v: u64| t.replace("{S}", &name).replace("{V}", &v.to_string());
                let answer = |rng: &mut Rng, page: usize, v: u64| Doc {
                    title: put(kind.titles[page], v),
                    blocks: vec![
                        Block::P(format!("{} {}", put(kind.intro[page], v), fill(rng))),
                        Block::P(format!("{} {}", put(kind.value[page], v), fill(rng))),
                        Block::P(format!("{} {} {}", fill(rng), fill(rng), fill(rng))),
                        Block::P(format!("{} {}", fill(rng), fill(rng))),
                    ],
                };
                let mut docs = vec![
                    (Role::Answer, answer(rng, 0, value)),
                    (Role::Answer, answer(rng, 1, value)),
                ];
                if s == DISAGREEING {
                    docs.push((Role::Disagrees, answer(rng, 0, value + DISAGREEMENT)));
                }
                docs.push((
                    Role::Mention,
                    Doc {
                        title: put(kind.titles[2], value),
                        blocks: vec![
                            Block::P(format!("{} {}", put(kind.mention[0], value), fill(rng))),
                            Block::P(format!("{} {}", put(kind.mention[1], value), fill(rng))),
                            Block::P(format!("{} {} {}", fill(rng), fill(rng), fill(rng))),
                        ],
                    },
                ));
                items.push(Item {
                    lang: lang.code,
                    topic: format!("ml-{}-{k}-{s}", lang.code),
                    question: put(kind.question, value),
                    value: value.to_string(),
                    docs,
                });
            }
        }
        for title in lang.others {
            let mut shuffled = lang.filler;
            rng.shuffle(&mut shuffled);
            let blocks = shuffled.chunks(3).map(|c| Block::P(c.join(" "))).collect();
            others.push((
                lang.code,
                Doc {
                    title: title.to_owned(),
                    blocks,
                },
            ));
        }
    }
    (items, others)
}

/// Invented names in each script, none given twice.
#[derive(Default)]
struct Names {
    latin: Namer,
    used: BTreeSet<String>,
}

const HAN: &[char] = &[
    '瓦', '尔', '坦', '卡', '斯', '莫', '拉', '伦', '维', '诺', '克', '特', '贝', '洛', '萨', '塔',
    '纳', '奥', '兰', '科', '蒂', '菲', '泽', '普', '达', '索',
];
const KATAKANA: &[char] = &[
    'カ', 'ル', 'デ', 'ン', 'ミ', 'ラ', 'ソ', 'ト', 'ベ', 'ヴ', 'ノ', 'ク', 'リ', 'サ', 'マ', 'タ',
    'ナ', 'ロ', 'ハ', 'フ', 'ゼ', 'ガ', 'ド',
];

impl Names {
    fn name(&mut self, script: Script, rng: &mut Rng) -> String {
        loop {
            let name = match script {
                Script::Latin => return self.latin.word(rng),
                Script::Cyrillic => spell(&self.latin.word(rng), CYRILLIC),
                Script::Arabic => spell(&self.latin.word(rng), ARABIC),
                Script::Han => (0..3).map(|_| rng.pick(HAN)).collect(),
                Script::Katakana => (0..rng.range(3, 4)).map(|_| rng.pick(KATAKANA)).collect(),
            };
            if self.used.insert(name.clone()) {
                return name;
            }
        }
    }
}

/// Latin letters (and digraphs, tried first) as Cyrillic ones.
const CYRILLIC: &[(&str, &str)] = &[
    ("sh", "ш"),
    ("th", "т"),
    ("ph", "ф"),
    ("a", "а"),
    ("b", "б"),
    ("c", "к"),
    ("d", "д"),
    ("e", "е"),
    ("f", "ф"),
    ("g", "г"),
    ("h", "х"),
    ("i", "и"),
    ("k", "к"),
    ("l", "л"),
    ("m", "м"),
    ("n", "н"),
    ("o", "о"),
    ("p", "п"),
    ("q", "к"),
    ("r", "р"),
    ("s", "с"),
    ("t", "т"),
    ("u", "у"),
    ("v", "в"),
    ("w", "в"),
    ("x", "кс"),
    ("y", "й"),
    ("z", "з"),
];
/// Latin letters as Arabic ones, short vowels written long as names from abroad are.
const ARABIC: &[(&str, &str)] = &[
    ("sh", "ش"),
    ("th", "ث"),
    ("ph", "ف"),
    ("a", "ا"),
    ("b", "ب"),
    ("c", "ك"),
    ("d", "د"),
    ("e", "ي"),
    ("f", "ف"),
    ("g", "غ"),
    ("h", "ه"),
    ("i", "ي"),
    ("k", "ك"),
    ("l", "ل"),
    ("m", "م"),
    ("n", "ن"),
    ("o", "و"),
    ("p", "ب"),
    ("q", "ق"),
    ("r", "ر"),
    ("s", "س"),
    ("t", "ت"),
    ("u", "و"),
    ("v", "ف"),
    ("w", "و"),
    ("x", "كس"),
    ("y", "ي"),
    ("z", "ز"),
];

fn spell(latin: &str, table: &[(&str, &str)]) -> String {
    let lower = latin.to_lowercase();
    let mut rest = lower.as_str();
    let mut out = String::new();
    while !rest.is_empty() {
        let (from, to) = (table.iter())
            .find(|(from, _)| rest.starts_with(from))
            .copied()
            .unwrap_or((&rest[..1], ""));
        out.push_str(to);
        rest = &rest[from.len()..];
    }
    super::words::capitalise(&out)
}

pub const LANGUAGES: &[Language] = &[
    Language {
        code: "en",
        script: Script::Latin,
        kinds: [
            Kind {
                question: "How long is the {S} Bridge?",
                titles: ["The {S} Bridge: a century of crossings", "Ten facts about the {S} Bridge", "Roadworks near the {S} Bridge"],
                intro: ["The {S} Bridge links the old town with the harbour district.", "Built of steel and stone, the {S} Bridge has become a landmark of the region."],
                value: ["The {S} Bridge is {V} metres long and carries four lanes of traffic.", "At {V} metres in length, the {S} Bridge is the longest crossing in the region."],
                mention: ["Repairs to the road leading to the {S} Bridge will begin next month.", "Drivers are advised to plan their journeys across the {S} Bridge in advance."],
            },
            Kind {
                question: "How high is Mount {S}?",
                titles: ["Mount {S}: walking the northern peak", "The seasons on Mount {S}", "New campsite opens below Mount {S}"],
                intro: ["Mount {S} stands at the heart of the northern range.", "Climbers have been drawn to Mount {S} for more than a century."],
                value: ["Mount {S} rises to a height of {V} metres above sea level.", "The summit of Mount {S}, at {V} metres, is covered in snow until June."],
                mention: ["A new campsite at the foot of Mount {S} will open next month.", "Pitches below Mount {S} can be booked online."],
            },
            Kind {
                question: "What is the melting point of the metal {S}?",
                titles: ["{S}: properties of a rare metal", "What engineers should know about {S}", "Prices of {S} keep rising"],
                intro: ["{S} is a rare silver-grey metal first isolated in a laboratory.", "Because of its hardness, {S} is used in turbine blades and drill heads."],
                value: ["The metal {S} melts at {V} degrees Celsius, well above copper.", "{S} has a melting point of {V} °C, according to several laboratories."],
                mention: ["The price of {S} on world markets has almost doubled over the past year.", "Analysts link the growing demand for {S} to the aircraft industry."],
            },
            Kind {
                question: "When was the town of {S} founded?",
                titles: ["{S}: a short history of the town", "A weekend in {S}", "{S} votes on a new bus line"],
                intro: ["{S} is a small town on the edge of the river plain.", "The old centre of {S} draws visitors every summer."],
                value: ["The town of {S} was founded in {V} by merchants from the coast.", "Founded in {V}, {S} still keeps its medieval market square."],
                mention: ["The council of {S} will vote next week on a new bus line to the station.", "Residents of {S} are divided over the plan."],
            },
        ],
        filler: [
            "The region has long attracted visitors from across the country.",
            "Local guides say the best time to come is late spring.",
            "Most of the surrounding land is farmland and forest.",
            "The nearest railway station is a short bus ride away.",
            "Several small museums in the area are open all year.",
            "Accommodation ranges from campsites to family-run hotels.",
            "The weather can change quickly, so visitors should come prepared.",
            "Many residents work in tourism, farming or the nearby factories.",
        ],
        others: ["New cycle lanes open in the city centre", "The flower market reopens", "A new public library opens its doors"],
    },
    Language {
        code: "de",
        script: Script::Latin,
        kinds: [
            Kind {
                question: "Wie lang ist die {S}-Brücke?",
                titles: ["Die {S}-Brücke: ein Jahrhundert Überquerungen", "Zehn Fakten über die {S}-Brücke", "Bauarbeiten an der {S}-Brücke"],
                intro: ["Die {S}-Brücke verbindet die Altstadt mit dem Hafenviertel.", "Aus Stahl und Stein gebaut, ist die {S}-Brücke zu einem Wahrzeichen der Region geworden."],
                value: ["Die {S}-Brücke ist {V} Meter lang und trägt vier Fahrspuren.", "Mit einer Länge von {V} Metern ist die {S}-Brücke die längste Querung der Region."],
                mention: ["Die Zufahrt zur {S}-Brücke wird ab nächstem Monat saniert.", "Autofahrer sollten ihre Fahrten über die {S}-Brücke frühzeitig planen."],
            },
            Kind {
                question: "Wie hoch ist der Berg {S}?",
                titles: ["Der Berg {S}: Wandern am Nordgipfel", "Die Jahreszeiten am Berg {S}", "Neuer Campingplatz am Fuß des Berges {S}"],
                intro: ["Der Berg {S} erhebt sich im Herzen des nördlichen Gebirges.", "Seit mehr als hundert Jahren zieht der Berg {S} Bergsteiger an."],
                value: ["Der Berg {S} erreicht eine Höhe von {V} Metern über dem Meeresspiegel.", "Der Gipfel des Berges {S} liegt auf {V} Metern und ist bis Juni verschneit."],
                mention: ["Am Fuß des Berges {S} eröffnet im nächsten Monat ein neuer Campingplatz.", "Die Stellplätze unterhalb des Berges {S} können online gebucht werden."],
            },
            Kind {
                question: "Wie hoch ist der Schmelzpunkt des Metalls {S}?",
                titles: ["{S}: Eigenschaften eines seltenen Metalls", "Was Ingenieure über {S} wissen sollten", "Die Preise für {S} steigen weiter"],
                intro: ["{S} ist ein seltenes, silbergraues Metall, das zuerst in einem Labor rein dargestellt wurde.", "Wegen seiner Härte wird {S} vor allem in Turbinenschaufeln und Bohrköpfen verwendet."],
                value: ["Das Metall {S} schmilzt bei {V} Grad Celsius und ist damit deutlich hitzebeständiger als Kupfer.", "Der Schmelzpunkt von {S} liegt bei {V} °C, wie mehrere Labore bestätigt haben."],
                mention: ["Der Preis für {S} hat sich auf dem Weltmarkt im vergangenen Jahr fast verdoppelt.", "Analysten führen die steigende Nachfrage nach {S} auf die Luftfahrtindustrie zurück."],
            },
            Kind {
                question: "Wann wurde die Stadt {S} gegründet?",
                titles: ["{S}: eine kurze Geschichte der Stadt", "Ein Wochenende in {S}", "{S} stimmt über eine neue Buslinie ab"],
                intro: ["{S} ist eine kleine Stadt am Rand der Flussebene.", "Die Altstadt von {S} zieht jeden Sommer viele Besucher an."],
                value: ["Die Stadt {S} wurde im Jahr {V} von Kaufleuten von der Küste gegründet.", "Seit ihrer Gründung im Jahr {V} hat {S} ihren mittelalterlichen Marktplatz bewahrt."],
                mention: ["Der Stadtrat von {S} stimmt nächste Woche über eine neue Buslinie zum Bahnhof ab.", "Die Einwohner von {S} sind über den Plan geteilter Meinung."],
            },
        ],
        filler: [
            "Die Region zieht seit langem Besucher aus dem ganzen Land an.",
            "Ortskundige Führer empfehlen vor allem den späten Frühling.",
            "Der größte Teil der Umgebung besteht aus Feldern und Wäldern.",
            "Der nächste Bahnhof ist mit dem Bus schnell zu erreichen.",
            "Mehrere kleine Museen in der Gegend sind das ganze Jahr geöffnet.",
            "Die Unterkünfte reichen vom Campingplatz bis zum Familienhotel.",
            "Das Wetter kann schnell umschlagen, daher sollten Besucher gut vorbereitet sein.",
            "Viele Einwohner arbeiten im Tourismus, in der Landwirtschaft oder in den Fabriken der Umgebung.",
        ],
        others: ["Neue Radwege in der Innenstadt", "Der Blumenmarkt öffnet wieder", "Neue Stadtbibliothek eröffnet"],
    },
    Language {
        code: "fr",
        script: Script::Latin,
        kinds: [
            Kind {
                question: "Quelle est la longueur du pont de {S} ?",
                titles: ["Le pont de {S}, un siècle de traversées", "Dix choses à savoir sur le pont de {S}", "Travaux aux abords du pont de {S}"],
                intro: ["Le pont de {S} relie la vieille ville au quartier du port.", "Bâti en acier et en pierre, le pont de {S} est devenu un emblème de la région."],
                value: ["Le pont de {S} mesure {V} mètres de longueur et compte quatre voies.", "Long de {V} mètres, le pont de {S} est le plus long ouvrage de la région."],
                mention: ["La réfection de la route menant au pont de {S} commencera le mois prochain.", "Les automobilistes sont invités à anticiper leurs trajets sur le pont de {S}."],
            },
            Kind {
                question: "Quelle est l'altitude du mont {S} ?",
                titles: ["Le mont {S}, sommet du nord", "Les saisons du mont {S}", "Un nouveau camping au pied du mont {S}"],
                intro: ["Le mont {S} se dresse au cœur du massif du nord.", "Depuis plus d'un siècle, le mont {S} attire les alpinistes."],
                value: ["Le mont {S} culmine à {V} mètres d'altitude.", "Le sommet du mont {S}, à {V} mètres, reste enneigé jusqu'en juin."],
                mention: ["Un nouveau camping ouvrira le mois prochain au pied du mont {S}.", "Les emplacements situés sous le mont {S} se réservent en ligne."],
            },
            Kind {
                question: "Quel est le point de fusion du {S} ?",
                titles: ["Le {S}, propriétés d'un métal rare", "Ce que les ingénieurs doivent savoir sur le {S}", "Le prix du {S} continue de grimper"],
                intro: ["Le {S} est un métal rare, gris argenté, isolé pour la première fois en laboratoire.", "En raison de sa dureté, le {S} sert surtout aux aubes de turbines et aux têtes de forage."],
                value: ["Le {S} fond à {V} degrés Celsius, bien au-dessus du cuivre.", "Le point de fusion du {S} est de {V} °C, selon plusieurs laboratoires."],
                mention: ["Le prix du {S} a presque doublé sur les marchés mondiaux en un an.", "Les analystes attribuent la hausse de la demande de {S} à l'industrie aéronautique."],
            },
            Kind {
                question: "En quelle année la ville de {S} a-t-elle été fondée ?",
                titles: ["{S}, brève histoire d'une ville", "Un week-end à {S}", "{S} vote pour une nouvelle ligne de bus"],
                intro: ["{S} est une petite ville en bordure de la plaine.", "Le vieux centre de {S} attire des visiteurs chaque été."],
                value: ["La ville de {S} a été fondée en {V} par des marchands venus de la côte.", "Fondée en {V}, {S} a conservé sa place du marché médiévale."],
                mention: ["Le conseil municipal de {S} votera la semaine prochaine sur une nouvelle ligne de bus vers la gare.", "Les habitants de {S} sont partagés sur le projet."],
            },
        ],
        filler: [
            "La région attire depuis longtemps des visiteurs de tout le pays.",
            "Les guides locaux conseillent de venir à la fin du printemps.",
            "Les environs sont en grande partie couverts de champs et de forêts.",
            "La gare la plus proche se trouve à quelques minutes en bus.",
            "Plusieurs petits musées de la région sont ouverts toute l'année.",
            "L'hébergement va du camping à l'hôtel familial.",
            "Le temps peut changer vite, et les visiteurs doivent être bien équipés.",
            "Beaucoup d'habitants travaillent dans le tourisme, l'agriculture ou les usines voisines.",
        ],
        others: ["De nouvelles pistes cyclables en centre-ville", "Le marché aux fleurs rouvre ses portes", "Une nouvelle bibliothèque municipale"],
    },
    Language {
        code: "es",
        script: Script::Latin,
        kinds: [
            Kind {
                question: "¿Cuánto mide el puente de {S}?",
                titles: ["El puente de {S}, un siglo de travesías", "Diez datos sobre el puente de {S}", "Obras junto al puente de {S}"],
                intro: ["El puente de {S} une el casco antiguo con el barrio del puerto.", "Construido en acero y piedra, el puente de {S} se ha convertido en un símbolo de la región."],
                value: ["El puente de {S} mide {V} metros de longitud y tiene cuatro carriles.", "Con {V} metros de largo, el puente de {S} es el más largo de la región."],
                mention: ["Las obras en la carretera que lleva al puente de {S} comenzarán el mes que viene.", "Se recomienda a los conductores planificar sus trayectos por el puente de {S}."],
            },
            Kind {
                question: "¿Qué altura tiene el monte {S}?",
                titles: ["El monte {S}, la cumbre del norte", "Las estaciones en el monte {S}", "Nuevo camping al pie del monte {S}"],
                intro: ["El monte {S} se alza en el corazón de la sierra del norte.", "Desde hace más de un siglo, el monte {S} atrae a montañeros."],
                value: ["El monte {S} alcanza una altura de {V} metros sobre el nivel del mar.", "La cumbre del monte {S}, a {V} metros, permanece nevada hasta junio."],
                mention: ["El mes que viene abrirá un nuevo camping al pie del monte {S}.", "Las parcelas bajo el monte {S} se reservan por internet."],
            },
            Kind {
                question: "¿Cuál es el punto de fusión del {S}?",
                titles: ["El {S}, propiedades de un metal raro", "Lo que los ingenieros deben saber del {S}", "El precio del {S} sigue subiendo"],
                intro: ["El {S} es un metal raro, gris plateado, aislado por primera vez en un laboratorio.", "Por su dureza, el {S} se usa sobre todo en álabes de turbinas y brocas."],
                value: ["El {S} se funde a {V} grados Celsius, muy por encima del cobre.", "El punto de fusión del {S} es de {V} °C, según varios laboratorios."],
                mention: ["El precio del {S} casi se ha duplicado en los mercados mundiales en un año.", "Los analistas atribuyen la mayor demanda de {S} a la industria aeronáutica."],
            },
            Kind {
                question: "¿En qué año se fundó la ciudad de {S}?",
                titles: ["{S}, breve historia de una ciudad", "Un fin de semana en {S}", "{S} vota una nueva línea de autobús"],
                intro: ["{S} es una pequeña ciudad al borde de la llanura.", "El centro histórico de {S} atrae visitantes cada verano."],
                value: ["La ciudad de {S} fue fundada en {V} por comerciantes de la costa.", "Fundada en {V}, {S} conserva su plaza del mercado medieval."],
                mention: ["El ayuntamiento de {S} votará la semana próxima una nueva línea de autobús a la estación.", "Los vecinos de {S} están divididos sobre el plan."],
            },
        ],
        filler: [
            "La región atrae desde hace tiempo a visitantes de todo el país.",
            "Los guías locales recomiendan venir a finales de la primavera.",
            "La mayor parte de los alrededores son campos y bosques.",
            "La estación de tren más cercana está a pocos minutos en autobús.",
            "Varios museos pequeños de la zona abren todo el año.",
            "El alojamiento va desde campings hasta hoteles familiares.",
            "El tiempo cambia deprisa, así que conviene venir preparado.",
            "Muchos vecinos trabajan en el turismo, la agricultura o las fábricas cercanas.",
        ],
        others: ["Nuevos carriles bici en el centro", "Reabre el mercado de las flores", "Inaugurada la nueva biblioteca municipal"],
    },
    Language {
        code: "zh",
        script: Script::Han,
        kinds: [
            Kind {
                question: "{S}大桥有多长？",
                titles: ["{S}大桥：百年跨越", "关于{S}大桥的十个事实", "{S}大桥附近道路施工"],
                intro: ["{S}大桥连接老城区和港口区。", "{S}大桥由钢材和石材建成，已成为当地的地标。"],
                value: ["{S}大桥全长{V}米，设有四条车道。", "这座长{V}米的{S}大桥是该地区最长的桥梁。"],
                mention: ["通往{S}大桥的道路将于下月开始维修。", "交通部门建议司机提前规划经过{S}大桥的路线。"],
            },
            Kind {
                question: "{S}山的海拔是多少米？",
                titles: ["{S}山：北方名峰", "{S}山的四季", "{S}山脚下新露营地开业"],
                intro: ["{S}山位于北部山脉的中心。", "一百多年来，{S}山一直吸引着登山者。"],
                value: ["{S}山海拔{V}米，是北部山脉的最高峰。", "{S}山的高度为{V}米，山顶积雪要到六月才融化。"],
                mention: ["{S}山脚下的新露营地将于下月开业。", "{S}山下的营位可以在网上预订。"],
            },
            Kind {
                question: "{S}的熔点是多少度？",
                titles: ["{S}：一种稀有金属的特性", "工程师需要了解的{S}知识", "{S}价格持续上涨"],
                intro: ["{S}是一种稀有的银灰色金属，最早在实验室中提炼出来。", "由于硬度高，{S}主要用于涡轮叶片和钻头。"],
                value: ["{S}的熔点为{V}摄氏度，远高于铜。", "{S}在{V}°C时熔化，多家实验室证实了这一点。"],
                mention: ["过去一年，{S}在国际市场上的价格几乎翻了一番。", "分析人士认为，航空工业推高了对{S}的需求。"],
            },
            Kind {
                question: "{S}镇是哪一年建立的？",
                titles: ["{S}镇简史", "在{S}度过周末", "{S}就新公交线路进行表决"],
                intro: ["{S}是河谷平原边缘的一座小镇。", "每年夏天，{S}的老城区都吸引着许多游客。"],
                value: ["{S}镇建于{V}年，最初由沿海商人建立。", "自{V}年建镇以来，{S}一直保留着中世纪的集市广场。"],
                mention: ["{S}镇议会将于下周就通往火车站的新公交线路进行表决。", "{S}的居民对这一计划意见不一。"],
            },
        ],
        filler: [
            "这一地区长期以来吸引着来自全国各地的游客。",
            "当地导游建议在春末前来游览。",
            "周边大部分地区是农田和森林。",
            "最近的火车站乘公交车几分钟即可到达。",
            "该地区有几家小型博物馆全年开放。",
            "住宿从露营地到家庭旅馆应有尽有。",
            "天气变化很快，游客应做好准备。",
            "许多居民在旅游业、农业或附近的工厂工作。",
        ],
        others: ["市中心新建自行车道", "花卉市场重新开放", "新的市立图书馆开馆"],
    },
    Language {
        code: "ja",
        script: Script::Katakana,
        kinds: [
            Kind {
                question: "{S}橋の長さは何メートルですか？",
                titles: ["{S}橋：百年の歩み", "{S}橋について知っておきたい十のこと", "{S}橋付近で道路工事"],
                intro: ["{S}橋は旧市街と港湾地区を結んでいる。", "鉄と石で造られた{S}橋は、地域のシンボルとなっている。"],
                value: ["{S}橋の全長は{V}メートルで、四車線の道路が通っている。", "長さ{V}メートルの{S}橋は、この地域で最も長い橋だ。"],
                mention: ["{S}橋へ向かう道路の補修工事が来月始まる。", "ドライバーは{S}橋周辺の移動を早めに計画するよう求められている。"],
            },
            Kind {
                question: "{S}山の標高は何メートルですか？",
                titles: ["{S}山：北の名峰", "{S}山の四季", "{S}山の麓に新しいキャンプ場"],
                intro: ["{S}山は北部山地の中央にそびえている。", "{S}山は百年以上にわたって登山者を引きつけてきた。"],
                value: ["{S}山の標高は{V}メートルで、北部山地の最高峰である。", "標高{V}メートルの{S}山の山頂付近では、六月まで雪が残る。"],
                mention: ["{S}山の麓に、来月新しいキャンプ場が開業する。", "{S}山の下にあるテントサイトはネットで予約できる。"],
            },
            Kind {
                question: "{S}の融点は何度ですか？",
                titles: ["{S}：希少金属の性質", "技術者が知っておくべき{S}のこと", "{S}の価格が上昇を続ける"],
                intro: ["{S}は銀灰色の希少な金属で、最初に実験室で精製された。", "硬度が高いため、{S}は主にタービンの羽根やドリルの刃に使われている。"],
                value: ["{S}の融点は{V}度で、銅よりもはるかに高い。", "{S}は摂氏{V}度で溶けることが、複数の研究所で確認されている。"],
                mention: ["この一年で、{S}の国際価格はほぼ二倍になった。", "アナリストは、{S}の需要増加を航空機産業によるものと見ている。"],
            },
            Kind {
                question: "{S}町は何年に創設されましたか？",
                titles: ["{S}町の歴史", "{S}で過ごす週末", "{S}で新しいバス路線を採決へ"],
                intro: ["{S}は平野の端にある小さな町だ。", "{S}の旧市街には毎年夏に多くの観光客が訪れる。"],
                value: ["{S}町は{V}年に沿岸の商人たちによって創設された。", "{V}年の創設以来、{S}は中世の市場広場を今も残している。"],
                mention: ["{S}町議会は来週、駅へ向かう新しいバス路線について採決する。", "{S}の住民の間では、この計画をめぐって意見が分かれている。"],
            },
        ],
        filler: [
            "この地域には昔から全国各地から観光客が訪れている。",
            "地元のガイドは春の終わりに訪れることを勧めている。",
            "周辺の大部分は畑と森林だ。",
            "最寄りの駅まではバスで数分で行ける。",
            "この地域のいくつかの小さな博物館は一年中開いている。",
            "宿泊施設はキャンプ場から家族経営の旅館までそろっている。",
            "天気が変わりやすいので、訪れる人は準備をしておく必要がある。",
            "多くの住民が観光業や農業、近くの工場で働いている。",
        ],
        others: ["市内中心部に新しい自転車道", "花市場が営業を再開", "新しい市立図書館が開館"],
    },
    Language {
        code: "ru",
        script: Script::Cyrillic,
        kinds: [
            Kind {
                question: "Какова длина моста {S}?",
                titles: ["Мост {S}: век переправ", "Десять фактов о мосте {S}", "Ремонт дороги у моста {S}"],
                intro: ["Мост {S} соединяет старый город с портовым районом.", "Построенный из стали и камня, мост {S} стал символом региона."],
                value: ["Длина моста {S} составляет {V} метров, по нему проходят четыре полосы движения.", "Мост {S} длиной {V} метров считается самым длинным в регионе."],
                mention: ["Ремонт дороги, ведущей к мосту {S}, начнётся в следующем месяце.", "Водителям советуют заранее планировать поездки через мост {S}."],
            },
            Kind {
                question: "Какова высота горы {S}?",
                titles: ["Гора {S}: северная вершина", "Времена года на горе {S}", "У подножия горы {S} открылся кемпинг"],
                intro: ["Гора {S} возвышается в самом сердце северного хребта.", "Уже более ста лет гора {S} привлекает альпинистов."],
                value: ["Гора {S} достигает высоты {V} метров над уровнем моря.", "Вершина горы {S} на высоте {V} метров покрыта снегом до июня."],
                mention: ["В следующем месяце у подножия горы {S} откроется новый кемпинг.", "Места под горой {S} можно забронировать онлайн."],
            },
            Kind {
                question: "Какова температура плавления металла {S}?",
                titles: ["{S}: свойства редкого металла", "Что инженерам нужно знать о металле {S}", "Цены на металл {S} продолжают расти"],
                intro: ["{S} — редкий серебристо-серый металл, впервые выделенный в лаборатории.", "Благодаря твёрдости металл {S} используют в лопатках турбин и буровых коронках."],
                value: ["Металл {S} плавится при температуре {V} градусов Цельсия, что намного выше, чем у меди.", "Температура плавления металла {S} составляет {V} °C, по данным нескольких лабораторий."],
                mention: ["За последний год цена металла {S} на мировом рынке выросла почти вдвое.", "Аналитики связывают рост спроса на металл {S} с авиационной отраслью."],
            },
            Kind {
                question: "В каком году был основан город {S}?",
                titles: ["{S}: краткая история города", "Выходные в городе {S}", "В городе {S} проголосуют за новый автобусный маршрут"],
                intro: ["{S} — небольшой город на краю речной равнины.", "Старый центр города {S} каждое лето привлекает туристов."],
                value: ["Город {S} был основан в {V} году купцами с побережья.", "Основанный в {V} году, город {S} сохранил средневековую рыночную площадь."],
                mention: ["На следующей неделе совет города {S} проголосует за новый автобусный маршрут до вокзала.", "Жители города {S} разошлись во мнениях о плане."],
            },
        ],
        filler: [
            "Регион давно привлекает туристов со всей страны.",
            "Местные гиды советуют приезжать в конце весны.",
            "Большая часть окрестностей занята полями и лесами.",
            "До ближайшей железнодорожной станции несколько минут на автобусе.",
            "Несколько небольших музеев в округе открыты круглый год.",
            "Жильё здесь есть на любой вкус, от кемпингов до семейных гостиниц.",
            "Погода меняется быстро, поэтому гостям стоит подготовиться.",
            "Многие жители работают в туризме, сельском хозяйстве или на соседних заводах.",
        ],
        others: ["В центре города открылись новые велодорожки", "Цветочный рынок снова открыт", "Открылась новая городская библиотека"],
    },
    Language {
        code: "ar",
        script: Script::Arabic,
        kinds: [
            Kind {
                question: "ما طول جسر {S}؟",
                titles: ["جسر {S}: قرن من العبور", "عشر حقائق عن جسر {S}", "أعمال طرق قرب جسر {S}"],
                intro: ["يربط جسر {S} البلدة القديمة بحي الميناء.", "أصبح جسر {S} المبني من الحديد والحجر معلما من معالم المنطقة."],
                value: ["يبلغ طول جسر {S} {V} مترا، ويضم أربع حارات للسيارات.", "يعد جسر {S} الذي يمتد على {V} مترا أطول جسر في المنطقة."],
                mention: ["تبدأ الشهر المقبل أعمال صيانة الطريق المؤدي إلى جسر {S}.", "ينصح السائقون بالتخطيط المسبق لرحلاتهم عبر جسر {S}."],
            },
            Kind {
                question: "ما ارتفاع جبل {S}؟",
                titles: ["جبل {S}: قمة الشمال", "الفصول الأربعة على جبل {S}", "مخيم جديد عند سفح جبل {S}"],
                intro: ["يقع جبل {S} في قلب السلسلة الجبلية الشمالية.", "منذ أكثر من قرن يجذب جبل {S} المتسلقين."],
                value: ["يبلغ ارتفاع جبل {S} {V} مترا فوق سطح البحر.", "تقع قمة جبل {S} على علو {V} مترا وتبقى مغطاة بالثلوج حتى يونيو."],
                mention: ["يفتتح الشهر المقبل مخيم جديد عند سفح جبل {S}.", "يمكن حجز الأماكن تحت جبل {S} عبر الإنترنت."],
            },
            Kind {
                question: "ما درجة انصهار معدن {S}؟",
                titles: ["{S}: خصائص معدن نادر", "ما يجب أن يعرفه المهندسون عن معدن {S}", "أسعار معدن {S} تواصل الارتفاع"],
                intro: ["{S} معدن نادر رمادي فضي عزل لأول مرة في المختبر.", "بسبب صلابته يستخدم معدن {S} في شفرات التوربينات ورؤوس الحفر."],
                value: ["ينصهر معدن {S} عند {V} درجة مئوية، وهي أعلى بكثير من درجة انصهار النحاس.", "تبلغ درجة انصهار معدن {S} {V} درجة مئوية بحسب عدة مختبرات."],
                mention: ["تضاعف سعر معدن {S} تقريبا في الأسواق العالمية خلال العام الماضي.", "يربط المحللون زيادة الطلب على معدن {S} بصناعة الطيران."],
            },
            Kind {
                question: "في أي عام تأسست مدينة {S}؟",
                titles: ["{S}: تاريخ موجز للمدينة", "عطلة نهاية أسبوع في {S}", "{S} تصوت على خط حافلات جديد"],
                intro: ["{S} مدينة صغيرة على طرف السهل.", "يجذب وسط مدينة {S} القديم الزوار كل صيف."],
                value: ["تأسست مدينة {S} عام {V} على يد تجار من الساحل.", "منذ تأسيسها في عام {V} حافظت مدينة {S} على ساحة السوق القديمة."],
                mention: ["يصوت مجلس مدينة {S} الأسبوع المقبل على خط حافلات جديد إلى المحطة.", "ينقسم سكان مدينة {S} حول الخطة."],
            },
        ],
        filler: [
            "تجذب المنطقة منذ زمن طويل زوارا من جميع أنحاء البلاد.",
            "ينصح المرشدون المحليون بالزيارة في أواخر الربيع.",
            "معظم الأراضي المحيطة حقول وغابات.",
            "تقع أقرب محطة قطار على بعد دقائق بالحافلة.",
            "تفتح عدة متاحف صغيرة في المنطقة أبوابها طوال العام.",
            "تتنوع أماكن الإقامة من المخيمات إلى الفنادق العائلية.",
            "يتغير الطقس بسرعة لذلك ينبغي للزوار الاستعداد.",
            "يعمل كثير من السكان في السياحة والزراعة والمصانع القريبة.",
        ],
        others: ["مسارات جديدة للدراجات في وسط المدينة", "سوق الزهور يعيد فتح أبوابه", "افتتاح مكتبة عامة جديدة"],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_written_in_each_languages_script() {
        let mut names = Names::default();
        let mut rng = Rng::new(1);
        let ru = names.name(Script::Cyrillic, &mut rng);
        let ar = names.name(Script::Arabic, &mut rng);
        let zh = names.name(Script::Han, &mut rng);
        assert!(
            ru.chars().all(|c| ('\u{400}'..='\u{4ff}').contains(&c)),
            "{ru}"
        );
        assert!(
            ar.chars().all(|c| ('\u{600}'..='\u{6ff}').contains(&c)),
            "{ar}"
        );
        assert_eq!(zh.chars().count(), 3);
        assert_eq!(spell("Zorvel", CYRILLIC), "Зорвел");
        assert_eq!(spell("Ashmir", ARABIC), "اشمير");
    }

    #[test]
    fn every_language_asks_the_same_questions() {
        let (items, others) = items(&mut Rng::new(2), |_| false);
        for lang in LANGUAGES {
            let mine: Vec<&Item> = items.iter().filter(|i| i.lang == lang.code).collect();
            assert_eq!(mine.len(), 4 * SUBJECTS_PER_KIND, "{}", lang.code);
            let disagreeing = |i: &&&Item| i.docs.iter().any(|(r, _)| *r == Role::Disagrees);
            assert_eq!(mine.iter().filter(disagreeing).count(), 4);
            assert_eq!(others.iter().filter(|(l, _)| *l == lang.code).count(), 3);
            for item in mine {
                // The value is stated on the answer pages and nowhere else.
                for (role, doc) in &item.docs {
                    let text: String = (doc.blocks.iter())
                        .map(|b| match b {
                            Block::P(p) => p.as_str(),
                            _ => "",
                        })
                        .collect();
                    let states = text.contains(&item.value);
                    assert_eq!(
                        states,
                        *role == Role::Answer,
                        "{} {role:?}: {text}",
                        item.topic
                    );
                }
                assert!(!item.question.contains(&item.value), "{}", item.question);
            }
        }
    }
}
