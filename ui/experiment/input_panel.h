#pragma once

#include "experiment.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;
class QTabWidget;
class QTimer;

namespace attnlab::ui {

// The Input dock: what attention runs on. Tabs Text | Image | Random | Files (the tab shown is the
// input kind; opening the Image tab applies the image it shows, the first sample until another is
// chosen), and below them the parameters every generated input shares: d, the projections
// Wq, Wk, Wv and their seed. On the Text tab the text is read either by random token embeddings
// or by a trained model (the built-in one, or a checkpoint folder opened with Open Model...,
// remembered among the recent models), whose layer is chosen there too: model input. On the
// Image tab the image is read likewise by a seeded patch embedding or by a trained Vision
// Transformer (the built-in Fashion-MNIST one, or a checkpoint folder), whose samples join the
// list of images.
class InputPanel : public QWidget {
    Q_OBJECT

public:
    explicit InputPanel(QWidget* parent = nullptr);

    // Shows spec's input, without emitting edited().
    void setSpec(const ExperimentSpec& spec);

    // Reads the image file at path with the current reader (as Open image... does after its
    // dialog): an empty string, or, for a file that does not decode, the message naming it, with
    // the image list and the spec left as they were.
    QString openImage(const QString& path);

signals:
    // The user changed the input: spec is the previous spec with that change.
    void edited(const ExperimentSpec& spec, const QString& description);

private:
    QWidget* makeTextTab();
    QWidget* makeImageTab();
    QWidget* makeRandomTab();
    QWidget* makeFilesTab();
    // Emits edited() with the spec after change(spec) has been applied.
    template <typename Change>
    void edit(const QString& description, Change change);
    void chooseImage();
    void chooseTensor(QLineEdit* field, const QString& what);
    // Asks for a ViT's folder: its path, or empty when cancelled or when it holds no ViT (a
    // message box says why).
    QString openVitFolder();
    // The two controls the Text and Image tabs share: the reader combo (random embeddings, the
    // models, Open Model...; chooseReader acts on it) and the spin box of the model's layer shown
    // (an edit of spec.input.layer), each with its tooltip.
    QComboBox* makeReader(const QString& toolTip);
    QSpinBox* makeLayerBox(const QString& toolTip);
    // A reader combo changed (the Text tab's or the Image tab's): random embeddings, a model, or
    // Open Model....
    void chooseReader(QComboBox* reader, int index);
    // Fills a reader combo: random (patch) embeddings, the built-in models of the tab (the KJV
    // Llama and the KJV GPT-2 for text, the Fashion-MNIST ViT for images), the recent models of
    // that architecture, Open Model...; selects modelPath (or the embeddings for an empty path).
    void fillReaders(QComboBox* reader, const QString& modelPath);
    // The kind a tab stands for now: model input when its reader is a model, else withoutModel.
    InputKind readerKind(const QComboBox* reader, InputKind withoutModel) const;

    ExperimentSpec m_spec;
    bool m_updating = false;  // setSpec() is filling the controls

    QTabWidget* m_tabs;
    QPlainTextEdit* m_text;
    QTimer* m_textDelay;
    QComboBox* m_sampleText;
    QComboBox* m_reader;       // random embeddings | models | Open Model...
    QString m_textModelPath;   // the text tab's model, kept while another tab is shown
    QString m_imageModelPath;  // the image tab's
    QSpinBox* m_layer;
    QCheckBox* m_keepLast;   // a language model's text longer than it reads: its last tokens
    QLabel* m_modelSummary;  // the text model's heads and positional encoding
    QComboBox* m_tokens;
    QCheckBox* m_positional;
    QComboBox* m_image;
    QComboBox* m_imageReader;  // patch embeddings | ViT models | Open Model...
    QSpinBox* m_imageLayer;
    QSpinBox* m_patch;
    QSpinBox* m_imageSize;
    QSpinBox* m_length;
    QDoubleSpinBox* m_rowNorm;
    QSpinBox* m_clusters;
    QLineEdit* m_queryFile;
    QLineEdit* m_keyFile;
    QLineEdit* m_valueFile;
    QSpinBox* m_headDim;
    QComboBox* m_projection;
    QSpinBox* m_inputSeed;
};

}  // namespace attnlab::ui
