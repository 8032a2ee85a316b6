#include "ui/experiment/input_panel.h"

#include "errors.h"
#include "ui/common/controls_column.h"
#include "ui/experiment/model_files.h"
#include "ui/images/image_loader.h"
#include "inputs/model_input.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

namespace attnlab::ui {

namespace {

// Typing pauses this long before the text is tokenised again.
constexpr int kTextDelayMs = 300;
// Whether a model of this architecture reads images (a ViT) rather than text; none reads neither.
std::optional<bool> readsImages(const std::optional<ModelArchitecture>& architecture)
{
    if (!architecture)
        return std::nullopt;
    return *architecture == ModelArchitecture::Vit;
}

// The tab of an input: a model reads the text (Text tab) or, a ViT, the image (Image tab).
int tabOf(const InputSpec& input)
{
    if (input.kind != InputKind::Model)
        return int(input.kind);
    return readableArchitecture(input.modelPath) == ModelArchitecture::Vit ? int(InputKind::Image)
                                                                           : 0;
}

// Makes spec read input of `kind`. A language model's causal mask was the model's, not the
// user's: it goes when the input leaves the model.
void setInputKind(ExperimentSpec& spec, InputKind kind)
{
    if (spec.input.kind == InputKind::Model && kind != InputKind::Model)
        spec.causal = false;
    spec.input.kind = kind;
}

// The built-in ViT's sample images (its folder's samples/, one per class), with names for people.
std::vector<std::pair<QString, QString>> vitSampleImages()
{
    std::vector<std::pair<QString, QString>> samples;
    const QString folder = builtinModelFolder(QString::fromLatin1(kBuiltinVitModel));
    if (folder.isEmpty())
        return samples;
    for (const QFileInfo& file :
         QDir(folder + QStringLiteral("/samples")).entryInfoList({QStringLiteral("*.png")}))
        samples.emplace_back(
            InputPanel::tr("Fashion-MNIST: %1")
                .arg(file.baseName().mid(3).replace(QLatin1Char('-'), QLatin1Char(' '))),
            file.absoluteFilePath());
    return samples;
}

// The sample images in the resources, with a name for people.
const std::pair<const char*, const char*> kSampleImages[] = {
    {":/images/chelsea.png", "Chelsea the cat"},
    {":/images/coffee.png", "Coffee cup"},
    {":/images/astronaut.png", "Astronaut (Eileen Collins)"},
};

QComboBox* comboBox(const QStringList& names, const QString& toolTip)
{
    auto* box = new QComboBox;
    box->addItems(names);
    box->setToolTip(toolTip);
    return box;
}

}  // namespace

InputPanel::InputPanel(QWidget* parent) : QWidget(parent)
{
    m_tabs = new QTabWidget;
    m_tabs->addTab(makeTextTab(), tr("Text"));
    m_tabs->addTab(makeImageTab(), tr("Image"));
    m_tabs->addTab(makeRandomTab(), tr("Random"));
    m_tabs->addTab(makeFilesTab(), tr("Files"));
    m_tabs->setToolTip(tr("The input attention runs on: tokens of a text, patches of an image, "
                          "random Gaussian rows, or Q, K, V loaded from .npy files."));
    connect(m_tabs, &QTabWidget::currentChanged, this, [this](int index) {
        const bool imageTab = index == int(InputKind::Image);
        const InputKind kind = index == 0 ? readerKind(m_reader, InputKind::Text)
                               : imageTab ? readerKind(m_imageReader, InputKind::Image)
                                          : InputKind(index);
        // The image the Image tab shows: the spec's, or the first sample while it names none.
        const QString imagePath = m_image->currentData().toString();
        const QString modelPath = (imageTab ? m_imageReader : m_reader)->currentData().toString();
        edit(tr("Use %1 input").arg(m_tabs->tabText(index).toLower()),
             [kind, imageTab, imagePath, modelPath](ExperimentSpec& spec) {
                 setInputKind(spec, kind);
                 if (kind == InputKind::Model) {
                     spec.input.modelPath = modelPath;
                     // As the model computes attention: GPT-2 causal, a ViT not.
                     spec.causal = !imageTab;
                     if (imageTab)  // a second checkpoint is a language model's
                         spec.input.comparisonModelPath.clear();
                 }
                 if (imageTab)
                     spec.input.imagePath = imagePath;
             });
    });

    m_headDim = dockSpinBox(1, 1024,
                            tr("d, the dimension of each head's queries, keys and values. "
                               "Token vectors have H d entries for H heads."));
    connect(m_headDim, &QSpinBox::valueChanged, this, [this](int d) {
        edit(tr("Set d to %1").arg(d), [d](ExperimentSpec& spec) { spec.input.headDim = d; });
    });
    m_projection = comboBox({tr("random"), tr("tied"), tr("identity")},
                            tr("How Q, K, V come from the token vectors X: random Q = X Wq, "
                               "K = X Wk, V = X Wv with seeded Gaussian weights; tied: Wk = Wq, "
                               "so each token attends to tokens like itself; identity: "
                               "Q = K = V = X (each head takes its own d columns)."));
    connect(m_projection, &QComboBox::currentIndexChanged, this, [this](int index) {
        edit(tr("Use %1 projections").arg(m_projection->itemText(index)),
             [index](ExperimentSpec& spec) { spec.input.projection = HeadProjection(index); });
    });
    m_inputSeed = dockSpinBox(0, std::numeric_limits<int>::max(),
                              tr("Seed of the token embeddings, Wq, Wk, Wv, the patch embedding "
                                 "and the random input. A model's weights and Q, K, V files draw "
                                 "nothing: the box shows a dash."));
    connect(m_inputSeed, &QSpinBox::valueChanged, this, [this](int seed) {
        edit(tr("Set the input seed to %1").arg(seed),
             [seed](ExperimentSpec& spec) { spec.input.seed = std::uint64_t(seed); });
    });

    auto* common = new QFormLayout;
    common->addRow(tr("Head dimension d"), m_headDim);
    common->addRow(tr("Projections"), m_projection);
    common->addRow(tr("Input seed"), m_inputSeed);

    // Object names: for tests and accessibility tools.
    m_tabs->setObjectName(QStringLiteral("inputTabs"));
    m_text->setObjectName(QStringLiteral("text"));
    m_sampleText->setObjectName(QStringLiteral("sampleText"));
    m_tokens->setObjectName(QStringLiteral("tokens"));
    m_reader->setObjectName(QStringLiteral("reader"));
    m_layer->setObjectName(QStringLiteral("layer"));
    m_keepLast->setObjectName(QStringLiteral("keepLastTokens"));
    m_imageReader->setObjectName(QStringLiteral("imageReader"));
    m_imageLayer->setObjectName(QStringLiteral("imageLayer"));
    m_positional->setObjectName(QStringLiteral("positionalEncoding"));
    m_image->setObjectName(QStringLiteral("image"));
    m_patch->setObjectName(QStringLiteral("patchSize"));
    m_imageSize->setObjectName(QStringLiteral("imageSize"));
    m_length->setObjectName(QStringLiteral("length"));
    m_rowNorm->setObjectName(QStringLiteral("randomNorm"));
    m_clusters->setObjectName(QStringLiteral("clusters"));
    m_queryFile->setObjectName(QStringLiteral("queryFile"));
    m_keyFile->setObjectName(QStringLiteral("keyFile"));
    m_valueFile->setObjectName(QStringLiteral("valueFile"));
    m_headDim->setObjectName(QStringLiteral("headDim"));
    m_projection->setObjectName(QStringLiteral("inputProjection"));
    m_inputSeed->setObjectName(QStringLiteral("inputSeed"));

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_tabs);
    layout->addLayout(common);
    layout->addStretch();
    setSpec(ExperimentSpec());
}

QWidget* InputPanel::makeTextTab()
{
    auto* tab = new QWidget;
    m_text = new QPlainTextEdit;
    m_text->setToolTip(tr("The text: each word and punctuation mark (or each character) is a "
                          "token. The same word always gets the same embedding vector; "
                          "positions add a sinusoidal encoding."));
    m_text->setMinimumHeight(80);
    m_textDelay = new QTimer(this);
    m_textDelay->setSingleShot(true);
    m_textDelay->setInterval(kTextDelayMs);
    connect(m_text, &QPlainTextEdit::textChanged, m_textDelay, qOverload<>(&QTimer::start));
    connect(m_textDelay, &QTimer::timeout, this, [this] {
        edit(tr("Edit the text"),
             [text = m_text->toPlainText(),
              kind = readerKind(m_reader, InputKind::Text)](ExperimentSpec& spec) {
                 setInputKind(spec, kind);
                 spec.input.text = text;
             });
    });

    m_sampleText = new QComboBox;
    m_sampleText->setToolTip(tr("Replace the text with one of the sample texts."));
    m_sampleText->addItem(tr("Sample texts..."));
    for (const QFileInfo& file : QDir(QStringLiteral(":/texts")).entryInfoList(QDir::Files))
        m_sampleText->addItem(file.baseName(), file.filePath());
    connect(m_sampleText, &QComboBox::activated, this, [this](int index) {
        if (index == 0)
            return;
        QFile file(m_sampleText->itemData(index).toString());
        if (file.open(QIODevice::ReadOnly)) {
            const QString text = QString::fromUtf8(file.readAll()).trimmed();
            {
                const QSignalBlocker blocker(m_text);
                m_text->setPlainText(text);
            }
            edit(tr("Load the sample text \"%1\"").arg(m_sampleText->itemText(index)),
                 [text, kind = readerKind(m_reader, InputKind::Text)](ExperimentSpec& spec) {
                     setInputKind(spec, kind);
                     spec.input.text = text;
                 });
        }
        const QSignalBlocker blocker(m_sampleText);
        m_sampleText->setCurrentIndex(0);
    });

    m_tokens = comboBox({tr("words"), tr("characters")},
                        tr("Tokens: words and punctuation marks (Unicode word boundaries), or "
                           "single characters."));
    connect(m_tokens, &QComboBox::currentIndexChanged, this, [this](int index) {
        edit(tr("Split into %1").arg(m_tokens->itemText(index)),
             [index](ExperimentSpec& spec) { spec.input.tokenMode = TokenMode(index); });
    });
    m_positional = new QCheckBox(tr("Positional encoding"));
    m_positional->setToolTip(tr("Add the sinusoidal encoding of each position to its token "
                                "vector: x_i = (e_i + PE(i)) / sqrt(2). Without it the same word "
                                "gets the same q, k, v wherever it stands."));
    connect(m_positional, &QCheckBox::toggled, this, [this](bool on) {
        edit(on ? tr("Add positional encoding") : tr("Remove positional encoding"),
             [on](ExperimentSpec& spec) { spec.input.positionalEncoding = on; });
    });

    m_reader = makeReader(tr("What reads the text. A trained model (GPT-2 architecture): its own "
                             "queries, keys and values of the chosen layer, every head, causal as "
                             "the model computes attention; its tokens are GPT-2's byte-level BPE "
                             "pieces (a leading space shows as ␣). Random embeddings: each word "
                             "gets a seeded Gaussian vector, for controlled experiments."));
    m_layer = makeLayerBox(tr("The model's layer whose heads are shown (0 is the first). The "
                              "head is chosen above the heatmaps, or on the Heads page."));
    m_keepLast = new QCheckBox(tr("Keep the last tokens"));
    m_keepLast->setToolTip(tr("A text longer than the model reads (its n_positions or "
                              "max_position_embeddings) is cut to its last tokens, as Hugging "
                              "Face's left truncation does; unticked, it is refused."));
    connect(m_keepLast, &QCheckBox::toggled, this, [this](bool on) {
        edit(on ? tr("Keep the last tokens of a long text")
                : tr("Refuse a text longer than the model reads"),
             [on](ExperimentSpec& spec) { spec.input.keepLastTokens = on; });
    });

    auto* layout = new QFormLayout(tab);
    layout->addRow(m_text);
    layout->addRow(m_sampleText);
    layout->addRow(tr("Read by"), m_reader);
    layout->addRow(tr("Layer"), m_layer);
    layout->addRow(m_keepLast);
    m_modelSummary = new QLabel(tab);
    m_modelSummary->setObjectName(QStringLiteral("modelSummary"));
    m_modelSummary->setWordWrap(true);
    layout->addRow(m_modelSummary);
    layout->addRow(tr("Tokens"), m_tokens);
    layout->addRow(m_positional);
    return tab;
}

QWidget* InputPanel::makeImageTab()
{
    auto* tab = new QWidget;
    m_image = new QComboBox;
    m_image->setToolTip(tr("The image: it is scaled, cut into p x p patches, and each patch "
                           "becomes a token (a linear patch embedding plus a 2-D position)."));
    for (const auto& [path, name] : kSampleImages)
        m_image->addItem(tr(name), QString::fromLatin1(path));
    for (const auto& [name, path] : vitSampleImages())
        m_image->addItem(name, path);
    connect(m_image, &QComboBox::activated, this, [this](int index) {
        edit(tr("Show %1").arg(m_image->itemText(index)),
             [path = m_image->itemData(index).toString(),
              kind = readerKind(m_imageReader, InputKind::Image)](ExperimentSpec& spec) {
                 setInputKind(spec, kind);
                 spec.input.imagePath = path;
             });
    });
    auto* open = new QPushButton(tr("Open image..."));
    open->setToolTip(tr("Load an image file (PNG, JPEG, ...)."));
    connect(open, &QPushButton::clicked, this, &InputPanel::chooseImage);

    m_patch = dockSpinBox(2, 128,
                          tr("p, the side of a patch in pixels: L = (width / p) x "
                             "(height / p) patches."));
    connect(m_patch, &QSpinBox::valueChanged, this, [this](int p) {
        edit(tr("Set the patch size to %1").arg(p),
             [p](ExperimentSpec& spec) { spec.input.patchSize = p; });
    });
    m_imageSize = dockSpinBox(16, 2048,
                              tr("The image's longest side is scaled to this many pixels "
                                 "before it is cut into patches."));
    m_imageSize->setSingleStep(16);
    connect(m_imageSize, &QSpinBox::valueChanged, this, [this](int size) {
        edit(tr("Scale the image to %1 pixels").arg(size),
             [size](ExperimentSpec& spec) { spec.input.imageSize = size; });
    });

    m_imageReader = makeReader(
        tr("What reads the image. A trained Vision Transformer: the image is resized and "
           "normalised as its preprocessor says, cut into its patches, and its own queries, keys "
           "and values of the chosen layer, every head, over [CLS] and the patches, are the input "
           "(no mask, as the model computes attention). Patch embeddings: a seeded linear "
           "embedding of p x p patches, for controlled experiments."));
    m_imageLayer = makeLayerBox(tr("The ViT's layer whose heads are shown (0 is the first)."));

    auto* layout = new QFormLayout(tab);
    layout->addRow(m_image);
    layout->addRow(open);
    layout->addRow(tr("Read by"), m_imageReader);
    layout->addRow(tr("Layer"), m_imageLayer);
    layout->addRow(tr("Patch size p"), m_patch);
    layout->addRow(tr("Image size"), m_imageSize);
    return tab;
}

QWidget* InputPanel::makeRandomTab()
{
    auto* tab = new QWidget;
    m_length = dockSpinBox(1, 1 << 20, tr("L, the number of random queries and keys."));
    connect(m_length, &QSpinBox::valueChanged, this, [this](int length) {
        edit(tr("Set L to %1").arg(length),
             [length](ExperimentSpec& spec) { spec.input.length = length; });
    });
    m_rowNorm =
        dockDoubleSpinBox(0, 1000, 3, 0.1,
                          tr("|q_i| = |k_j|, the length of every random query and key. auto is "
                             "d^(1/4), which makes |x'| = 1 at the default scale s = 1/sqrt(d)."));
    m_rowNorm->setSpecialValueText(tr("auto: d^(1/4)"));
    connect(m_rowNorm, &QDoubleSpinBox::valueChanged, this, [this](double norm) {
        edit(tr("Set the row norm to %1").arg(norm), [norm](ExperimentSpec& spec) {
            spec.input.rowNorm = norm > 0 ? std::optional<double>(norm) : std::nullopt;
        });
    });
    m_clusters = dockSpinBox(0, 1024,
                             tr("0: uniformly random directions. C > 0: rows gather around "
                                "C random directions, which makes attention peaked."));
    connect(m_clusters, &QSpinBox::valueChanged, this, [this](int clusters) {
        edit(tr("Set clusters to %1").arg(clusters),
             [clusters](ExperimentSpec& spec) { spec.input.clusters = clusters; });
    });
    auto* layout = new QFormLayout(tab);
    layout->addRow(tr("Length L"), m_length);
    layout->addRow(tr("Row norm"), m_rowNorm);
    layout->addRow(tr("Clusters"), m_clusters);
    return tab;
}

QWidget* InputPanel::makeFilesTab()
{
    auto* tab = new QWidget;
    auto* layout = new QFormLayout(tab);
    const auto addFileRow = [&](QLineEdit*& field, const QString& label, const QString& what,
                                const QString& toolTip) {
        field = new QLineEdit;
        field->setToolTip(toolTip);
        field->setPlaceholderText(tr(".npy file"));
        auto* browse = new QPushButton(tr("..."));
        browse->setToolTip(tr("Choose the %1 file.").arg(what));
        connect(browse, &QPushButton::clicked, this,
                [this, field, what] { chooseTensor(field, what); });
        connect(field, &QLineEdit::editingFinished, this, [this] {
            edit(tr("Load Q, K, V files"), [this](ExperimentSpec& spec) {
                setInputKind(spec, InputKind::Files);
                spec.input.queryPath = m_queryFile->text();
                spec.input.keyPath = m_keyFile->text();
                spec.input.valuePath = m_valueFile->text();
            });
        });
        auto* row = new QHBoxLayout;
        row->addWidget(field);
        row->addWidget(browse);
        layout->addRow(label, row);
    };
    addFileRow(m_queryFile, tr("Q"), tr("query"),
               tr("Queries: a .npy array L x d (one head) or H x L x d, float32 or float64."));
    addFileRow(m_keyFile, tr("K"), tr("key"), tr("Keys: the shape of the queries."));
    addFileRow(m_valueFile, tr("V"), tr("value"),
               tr("Values: L x d_v or H x L x d_v (optional; without it V = K)."));
    return tab;
}

template <typename Change>
void InputPanel::edit(const QString& description, Change change)
{
    if (m_updating)
        return;
    ExperimentSpec spec = m_spec;
    change(spec);
    m_spec = spec;
    emit edited(spec, description);
}

void InputPanel::chooseImage()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open image"), QString(),
        tr("Images (*.png *.jpg *.jpeg *.bmp *.gif *.webp *.tif *.tiff);;All files (*)"));
    if (path.isEmpty())
        return;
    const QString problem = openImage(path);
    if (!problem.isEmpty())
        QMessageBox::warning(this, tr("Open image"), problem);
}

QString InputPanel::openImage(const QString& path)
{
    // A file that does not decode is refused here: the list keeps naming the image shown.
    try {
        loadImagePixels(path, 0);
    } catch (const InputError& e) {
        return e.message();
    }
    int index = m_image->findData(path);
    if (index < 0) {
        m_image->addItem(QFileInfo(path).fileName(), path);
        index = m_image->count() - 1;
    }
    m_image->setCurrentIndex(index);
    edit(tr("Open %1").arg(QFileInfo(path).fileName()),
         [path, kind = readerKind(m_imageReader, InputKind::Image)](ExperimentSpec& spec) {
             setInputKind(spec, kind);
             spec.input.imagePath = path;
         });
    return QString();
}

InputKind InputPanel::readerKind(const QComboBox* reader, InputKind withoutModel) const
{
    return reader->currentData().toString().isEmpty() ? withoutModel : InputKind::Model;
}

void InputPanel::fillReaders(QComboBox* reader, const QString& modelPath)
{
    const bool images = reader == m_imageReader;
    const QStringList builtins =
        images ? QStringList{QString::fromLatin1(kBuiltinVitModel)} : builtinTextModels();
    const QSignalBlocker blocker(reader);
    reader->clear();
    reader->addItem(images ? tr("Patch embeddings") : tr("Random embeddings"), QString());
    for (const QString& builtin : builtins) {
        QString name = builtinDisplayName(builtin);
        name[0] = name[0].toUpper();
        reader->addItem(name, builtin);
    }
    // The recent models of this tab's architecture.
    const QString current = explicitModelId(modelPath);
    QStringList recent = recentModels();
    if (!current.isEmpty() && !isBuiltinName(current) && !recent.contains(current))
        recent.prepend(current);
    for (const QString& folder : recent)
        if (!isBuiltinName(folder) && readsImages(readableArchitecture(folder)) == images)
            reader->addItem(modelDisplayName(folder), folder);
    reader->addItem(tr("Open Model..."), QStringLiteral("open"));
    reader->setItemData(reader->count() - 1,
                        images ? tr("A folder holding config.json, preprocessor_config.json and "
                                    "the .safetensors weights of a Vision Transformer (model_type "
                                    "vit), as Hugging Face stores them.")
                               : tr("A .gguf file (llama.cpp's format, quantized or not), or a "
                                    "folder holding config.json, the .safetensors weights (one "
                                    "file, or shards with model.safetensors.index.json) and the "
                                    "tokenizer (tokenizer.json, or vocab.json + merges.txt) of a "
                                    "language model: GPT-2, Llama, Mistral, Qwen2 or GPT-NeoX "
                                    "(Pythia), as Hugging Face stores them."),
                        Qt::ToolTipRole);
    reader->setCurrentIndex(std::max(0, reader->findData(current)));
}

QComboBox* InputPanel::makeReader(const QString& toolTip)
{
    auto* reader = new QComboBox;
    reader->setToolTip(toolTip);
    reader->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    reader->setMinimumContentsLength(12);
    connect(reader, &QComboBox::activated, this,
            [this, reader](int index) { chooseReader(reader, index); });
    return reader;
}

QSpinBox* InputPanel::makeLayerBox(const QString& toolTip)
{
    QSpinBox* box = dockSpinBox(0, 0, toolTip);
    connect(box, &QSpinBox::valueChanged, this, [this](int layer) {
        edit(tr("Show layer %1").arg(layer),
             [layer](ExperimentSpec& spec) { spec.input.layer = layer; });
    });
    return box;
}

void InputPanel::chooseReader(QComboBox* reader, int index)
{
    const bool images = reader == m_imageReader;
    const QString currentModel =
        m_spec.input.kind == InputKind::Model ? m_spec.input.modelPath : QString();
    QString path = reader->itemData(index).toString();
    if (path == QLatin1String("open")) {
        path = images ? openVitFolder()
                      : openLanguageModel(this, tr("Open a model: a .gguf file, or the "
                                                   "config.json of a model folder"));
        if (path.isEmpty()) {
            fillReaders(reader, currentModel);
            return;
        }
        fillReaders(reader, path);
    }
    if (path.isEmpty()) {
        edit(images ? tr("Read the image with patch embeddings")
                    : tr("Read the text with random embeddings"),
             [images](ExperimentSpec& spec) {
                 setInputKind(spec, images ? InputKind::Image : InputKind::Text);
             });
        return;
    }
    const int layers = modelShapeOf(path).layers;
    // A ViT reads a Fashion-MNIST sample rather than a photo it was not trained on, unless the
    // user chose an image of their own.
    QString imagePath = m_image->currentData().toString();
    if (images && imagePath.startsWith(QLatin1String(":/images/"))) {
        const auto samples = vitSampleImages();
        if (!samples.empty())
            imagePath = samples.front().second;
    }
    edit(tr("Read the %1 with %2").arg(images ? tr("image") : tr("text"), modelDisplayName(path)),
         [path, layers, images, imagePath](ExperimentSpec& spec) {
             spec.input.kind = InputKind::Model;
             spec.input.modelPath = path;
             if (images) {
                 spec.input.imagePath = imagePath;
                 spec.input.comparisonModelPath.clear();  // a language model's
             }
             if (layers > 0 && spec.input.layer >= layers)
                 spec.input.layer = layers - 1;
             spec.causal = !images;  // as the model computes attention
         });
}

QString InputPanel::openVitFolder()
{
    const QString path = QFileDialog::getExistingDirectory(this, tr("Open a model folder"));
    if (path.isEmpty() || readsImages(readableArchitecture(path)).value_or(false))
        return path;
    QMessageBox::warning(
        this, tr("Open Model"),
        !QFileInfo::exists(path + QStringLiteral("/config.json"))
            ? tr("%1 holds no config.json: a model folder holds config.json and the "
                 ".safetensors weights.")
                  .arg(QDir::toNativeSeparators(path))
            : tr("%1 holds no Vision Transformer (model_type vit); a language model reads text: "
                 "open it from the Text tab.")
                  .arg(QDir::toNativeSeparators(path)));
    return QString();
}

void InputPanel::chooseTensor(QLineEdit* field, const QString& what)
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open the %1 file").arg(what),
                                                      QString(), tr("NumPy arrays (*.npy)"));
    if (path.isEmpty())
        return;
    field->setText(path);
    emit field->editingFinished();
}

void InputPanel::setSpec(const ExperimentSpec& spec)
{
    m_spec = spec;
    m_updating = true;
    const InputSpec& input = spec.input;
    const int tab = tabOf(input);
    m_tabs->setCurrentIndex(tab);
    const bool model = input.kind == InputKind::Model;
    const bool imageModel = model && tab == int(InputKind::Image);
    const bool textModel = model && !imageModel;
    // Each tab keeps the reader it was last given, so that a round trip through another tab
    // comes back to the same model.
    if (tab == 0)
        m_textModelPath = textModel ? input.modelPath : QString();
    else if (tab == int(InputKind::Image))
        m_imageModelPath = imageModel ? input.modelPath : QString();
    fillReaders(m_reader, m_textModelPath);
    fillReaders(m_imageReader, m_imageModelPath);
    const ModelShape shape = model ? modelShapeOf(input.modelPath) : ModelShape();
    for (const auto& [layer, reads] :
         {std::pair(m_layer, textModel), std::pair(m_imageLayer, imageModel)}) {
        showRange(layer, 0, std::max({0, shape.layers - 1, reads ? input.layer : 0}));
        showValue(layer, reads ? input.layer : 0);
        layer->setEnabled(reads);
    }
    m_modelSummary->setText(textModel ? shape.summary : QString());
    m_modelSummary->setVisible(textModel && !shape.summary.isEmpty());
    m_keepLast->setChecked(textModel && input.keepLastTokens);
    m_keepLast->setEnabled(textModel);
    if (m_text->toPlainText() != input.text) {
        m_textDelay->stop();
        const QSignalBlocker blocker(m_text);
        m_text->setPlainText(input.text);
    }
    // A model splits the text with its tokenizer and places the tokens its own way (learned
    // positions, rotary): the boxes say so rather than show the spec's choices.
    showChoiceInForce(m_tokens, !model, int(input.tokenMode), tr("the model's tokenizer"));
    m_positional->setEnabled(!model);
    m_positional->setText(model ? tr("Positional encoding: the model's own")
                                : tr("Positional encoding"));
    m_positional->setChecked(model || input.positionalEncoding);
    if (!input.imagePath.isEmpty() && m_image->findData(input.imagePath) < 0)
        m_image->addItem(QFileInfo(input.imagePath).fileName(), input.imagePath);
    m_image->setCurrentIndex(std::max(0, m_image->findData(input.imagePath)));
    // A ViT resizes and cuts the image as it was trained to: the boxes show its sizes.
    const auto vitSize = [](int size) { return size > 0 ? std::optional(size) : std::nullopt; };
    showValueInForce(m_patch, !imageModel,
                     imageModel ? vitSize(shape.patchSize) : std::optional(input.patchSize));
    showValueInForce(m_imageSize, !imageModel,
                     imageModel ? vitSize(shape.imageSize) : std::optional(input.imageSize));
    showValue(m_length, input.length);
    showValue(m_rowNorm, input.rowNorm.value_or(0));
    showValue(m_clusters, input.clusters);
    m_queryFile->setText(input.queryPath);
    m_keyFile->setText(input.keyPath);
    m_valueFile->setText(input.valuePath);
    // A model's heads have its own d, the files' rows theirs: the box shows the model's while it
    // cannot be changed, and a dash for files (their d is known once they are read).
    std::optional<int> headDim = input.headDim;
    if (input.kind == InputKind::Files || (model && shape.headDim <= 0))
        headDim.reset();
    else if (model)
        headDim = shape.headDim;
    showValueInForce(m_headDim, input.kind != InputKind::Files && !model, headDim);
    const auto projectionInForce = [](InputKind kind) {
        switch (kind) {
            case InputKind::Files: return tr("the files' Q, K, V");
            case InputKind::Model: return tr("the model's weights");
            case InputKind::Random: return tr("Q, K, V drawn at random");
            case InputKind::Text:
            case InputKind::Image: break;
        }
        return QString();
    };
    showChoiceInForce(m_projection, input.kind == InputKind::Text || input.kind == InputKind::Image,
                      int(input.projection), projectionInForce(input.kind));
    // A model's weights and the files' Q, K, V are read, not drawn: no seed is in force.
    const bool drawn = input.kind != InputKind::Files && !model;
    showValueInForce(m_inputSeed, drawn,
                     drawn ? std::optional(int(std::min<std::uint64_t>(
                                 input.seed, std::numeric_limits<int>::max())))
                           : std::nullopt);
    m_updating = false;
}

}  // namespace attnlab::ui
