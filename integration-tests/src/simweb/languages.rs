//! The languages family: one question in each of German, French, Spanish, Chinese, Japanese,
//! Russian and Arabic (written right to left), with the pages that answer it in that language
//! on two sites, a page naming its subject without the answer, and a page on something else,
//! all in that language. [`super::Corpus::generate_with_languages`] appends them.
//!
//! A page's words are those of its language, as its people write them: the answer's sentence
//! uses other forms of the question's words (German "Schmelzpunkt" for "schmilzt", Russian
//! "температуре" for "температура"), so trawl finds it only by reading the language.

use super::render::{Block, Doc};

/// One language's question and its pages' text.
pub struct Spec {
    /// ISO 639-1 code, as `<html lang>` and trawl's `language` name it.
    pub lang: &'static str,
    pub question: &'static str,
    /// The value the answer pages state, as they write it.
    pub value: &'static str,
    /// Two answer pages: title and paragraphs, the value in one sentence of each.
    pub answers: [(&'static str, &'static [&'static str]); 2],
    /// Names the subject, never the value.
    pub distractor: (&'static str, &'static [&'static str]),
    /// Another subject altogether.
    pub other: (&'static str, &'static [&'static str]),
}

pub const SPECS: &[Spec] = &[
    Spec {
        lang: "de",
        question: "Wie hoch ist der Schmelzpunkt des Metalls Quarvium?",
        value: "1342",
        answers: [
            ("Quarvium: Eigenschaften eines seltenen Metalls", &[
                "Quarvium ist ein silbergraues Metall, das 1987 in einem Labor in Leipzig zum ersten Mal rein dargestellt wurde.",
                "Das Metall schmilzt bei 1342 Grad Celsius und ist damit deutlich hitzebeständiger als Kupfer.",
                "Wegen seiner Härte wird Quarvium heute vor allem in Turbinenschaufeln und Bohrköpfen verwendet.",
            ]),
            ("Was Ingenieure über Quarvium wissen sollten", &[
                "Für Ingenieure ist Quarvium vor allem wegen seiner Wärmebeständigkeit interessant.",
                "Sein Schmelzpunkt liegt bei 1342 Grad Celsius, wie Messungen mehrerer Institute bestätigt haben.",
                "Die Verarbeitung ist aufwendig, weil das Metall an der Luft schnell eine dünne Oxidschicht bildet.",
            ]),
        ],
        distractor: ("Der Quarvium-Abbau in Sachsen", &[
            "In Sachsen wird Quarvium seit den neunziger Jahren in zwei kleinen Gruben abgebaut.",
            "Die Gemeinden streiten seit Jahren darüber, wer die Einnahmen aus dem Abbau erhalten soll.",
            "Umweltverbände fordern strengere Auflagen für die Lagerung des Abraums.",
        ]),
        other: ("Neue Radwege in der Innenstadt", &[
            "Die Stadt hat im Sommer vier neue Radwege eröffnet, die den Bahnhof mit der Altstadt verbinden.",
            "Radfahrer loben die breiten Spuren, Händler beklagen dagegen fehlende Parkplätze.",
        ]),
    },
    Spec {
        lang: "fr",
        question: "Quelle est la longueur du pont de Vellimar sur la Garonne ?",
        value: "874",
        answers: [
            ("Le pont de Vellimar, un ouvrage centenaire", &[
                "Le pont de Vellimar franchit la Garonne depuis 1911 et relie les deux quartiers historiques de la ville.",
                "Le pont de Vellimar mesure 874 mètres de longueur et repose sur onze piles de pierre.",
                "Il a été restauré entre 2015 et 2018 sans jamais être fermé aux piétons.",
            ]),
            ("Visiter Vellimar : le pont et ses quais", &[
                "La promenade commence sur les quais, au pied du pont de Vellimar.",
                "Long de 874 mètres, le pont offre la plus belle vue sur la Garonne et les vignobles voisins.",
                "Au coucher du soleil, les arches sont éclairées par des projecteurs installés en 2019.",
            ]),
        ],
        distractor: ("Travaux sur les quais de Vellimar", &[
            "Des travaux de réfection des quais près du pont de Vellimar commenceront en mars.",
            "La circulation sera réduite à une voie pendant six semaines, selon la mairie.",
        ]),
        other: ("Le marché aux fleurs rouvre ses portes", &[
            "Après deux ans de fermeture, le marché aux fleurs de la place centrale a rouvert samedi.",
            "Une vingtaine de producteurs de la région y vendent leurs plantes chaque week-end.",
        ]),
    },
    Spec {
        lang: "es",
        question: "¿Cuántos kilómetros mide el río Calvena desde su nacimiento?",
        value: "613",
        answers: [
            ("El río Calvena, de la sierra al mar", &[
                "El río Calvena nace en la sierra de Orzana, a más de mil ochocientos metros de altitud.",
                "Su recorrido mide 613 kilómetros hasta la desembocadura, lo que lo convierte en el más largo de la región.",
                "Sus aguas riegan huertas y olivares desde hace siglos.",
            ]),
            ("Diez datos sobre el Calvena", &[
                "El Calvena atraviesa tres provincias y once municipios antes de llegar al mar.",
                "Con 613 kilómetros de longitud, el río Calvena supera a todos sus afluentes juntos.",
                "En primavera, el deshielo puede triplicar su caudal en pocas semanas.",
            ]),
        ],
        distractor: ("Sequía en la cuenca del Calvena", &[
            "Los embalses de la cuenca del río Calvena están al treinta por ciento de su capacidad.",
            "Los agricultores piden ayudas para afrontar la peor sequía de la década.",
        ]),
        other: ("Inaugurada la nueva biblioteca municipal", &[
            "La nueva biblioteca municipal abrió el lunes con más de cuarenta mil volúmenes.",
            "El edificio incluye una sala infantil y un auditorio para doscientas personas.",
        ]),
    },
    Spec {
        lang: "zh",
        question: "瓦尔坦大桥的全长是多少米？",
        value: "1580",
        answers: [
            ("瓦尔坦大桥：跨越海峡的钢铁巨龙", &[
                "瓦尔坦大桥位于海峡最窄处，于二零零八年正式通车，连接两岸的港口城市。",
                "瓦尔坦大桥全长1580米，主跨为悬索结构，是当地最长的桥梁。",
                "大桥每天通行车辆超过三万辆，大大缩短了两岸之间的交通时间。",
            ]),
            ("游览瓦尔坦大桥的五个理由", &[
                "瓦尔坦大桥不仅是交通要道，也是热门的观光景点。",
                "这座全长1580米的大桥在夜间会亮起彩色灯光，吸引了大量游客。",
                "桥下的海滨公园适合散步和骑自行车。",
            ]),
        ],
        distractor: ("瓦尔坦大桥周边交通管制通知", &[
            "因道路维修，瓦尔坦大桥北侧匝道将于下周封闭三天。",
            "交通部门建议司机提前规划路线，绕行南侧道路。",
        ]),
        other: ("本市新开三家社区图书馆", &[
            "本月，市区新开了三家社区图书馆，为居民提供免费借阅服务。",
            "图书馆还设有儿童阅读区和自习室，周末开放时间延长到晚上九点。",
        ]),
    },
    Spec {
        lang: "ja",
        question: "カルデン山の標高は何メートルですか？",
        value: "2317",
        answers: [
            ("カルデン山：北の名峰を歩く", &[
                "カルデン山は北部山地の中央にそびえる山で、古くから信仰の対象とされてきた。",
                "カルデン山の標高は2317メートルで、山頂からは日本海を望むことができる。",
                "登山道は三本あり、初心者でも七時間ほどで往復できる。",
            ]),
            ("カルデン山の四季と自然", &[
                "春には高山植物が咲き、秋には山腹一面が紅葉に染まる。",
                "標高2317メートルのカルデン山の山頂付近では、七月まで雪が残ることもある。",
                "山麓の温泉街は登山客でにぎわっている。",
            ]),
        ],
        distractor: ("カルデン山麓で新しいキャンプ場が開業", &[
            "カルデン山の麓に、来月新しいキャンプ場が開業する予定だ。",
            "テントサイトは四十区画で、予約は公式サイトで受け付ける。",
        ]),
        other: ("駅前商店街で夏祭りを開催", &[
            "駅前の商店街で、今週末に三年ぶりとなる夏祭りが開かれる。",
            "屋台や盆踊りのほか、子ども向けのゲーム大会も予定されている。",
        ]),
    },
    Spec {
        lang: "ru",
        question: "При какой температуре плавится металл вельтрий и кто его открыл?",
        value: "1675",
        answers: [
            ("Вельтрий: редкий металл с Урала", &[
                "Вельтрий был открыт в 1964 году группой химиков из Свердловска.",
                "Температура плавления вельтрия составляет 1675 градусов Цельсия, что выше, чем у железа.",
                "Металл применяют в авиационных двигателях и в медицинских имплантатах.",
            ]),
            ("Что нужно знать о вельтрии", &[
                "Вельтрий относится к тугоплавким металлам и плохо поддаётся обработке.",
                "Он плавится при температуре 1675 градусов, поэтому его выплавляют в вакуумных печах.",
                "Мировые запасы вельтрия оцениваются всего в несколько тысяч тонн.",
            ]),
        ],
        distractor: ("Цены на вельтрий выросли", &[
            "За последний год цены на вельтрий на мировом рынке выросли почти вдвое.",
            "Аналитики связывают рост с увеличением спроса со стороны авиастроителей.",
        ]),
        other: ("В городе открылся новый парк", &[
            "В субботу в центре города открылся новый парк с прудом и детскими площадками.",
            "На открытие пришли несколько тысяч жителей.",
        ]),
    },
    Spec {
        lang: "ar",
        question: "ما هو طول جسر الزهراني الجديد فوق النهر؟",
        value: "1275",
        answers: [
            ("جسر الزهراني الجديد: أطول جسر في المنطقة", &[
                "افتتح جسر الزهراني الجديد في عام ألفين وتسعة عشر ليربط ضفتي النهر في وسط المدينة.",
                "يبلغ طول جسر الزهراني الجديد 1275 مترا، ويتسع لست حارات للسيارات.",
                "ساهم الجسر في تخفيف الازدحام المروري بشكل كبير خلال ساعات الذروة.",
            ]),
            ("حقائق عن جسر الزهراني", &[
                "يعد جسر الزهراني من أبرز معالم المدينة الحديثة.",
                "ويمتد الجسر على طول 1275 مترا فوق النهر والحدائق المحيطة به.",
                "تضاء أعمدة الجسر ليلا بألوان مختلفة في المناسبات الوطنية.",
            ]),
        ],
        distractor: ("إغلاق مؤقت لجسر الزهراني", &[
            "أعلنت البلدية إغلاق جسر الزهراني جزئيا يوم الجمعة لأعمال الصيانة.",
            "ودعت السائقين إلى استخدام الطرق البديلة خلال فترة الإغلاق.",
        ]),
        other: ("افتتاح مكتبة عامة جديدة", &[
            "افتتحت في المدينة مكتبة عامة جديدة تضم أكثر من عشرين ألف كتاب.",
            "وتوفر المكتبة قاعات للقراءة وورش عمل للأطفال في عطلة نهاية الأسبوع.",
        ]),
    },
];

/// The page kinds of one language's pages, in the order [`docs`] gives them.
pub enum Role {
    Answer,
    Distractor,
    Other,
}

/// One language's pages as documents: the two answer pages, the distractor, the other page.
pub fn docs(spec: &Spec) -> Vec<(Role, Doc)> {
    let doc = |(title, paragraphs): (&str, &[&str])| Doc {
        title: title.to_owned(),
        blocks: paragraphs
            .iter()
            .map(|p| Block::P((*p).to_owned()))
            .collect(),
    };
    let [first, second] = spec.answers;
    vec![
        (Role::Answer, doc(first)),
        (Role::Answer, doc(second)),
        (Role::Distractor, doc(spec.distractor)),
        (Role::Other, doc(spec.other)),
    ]
}
