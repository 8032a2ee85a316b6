#pragma once

#include "types.h"

#include <memory>

namespace attnlab {

// An L x L matrix of a result (P or P^) in the precision the engine ran in, shared read-only:
// float P at L = 4096 is 64 MiB where double would be 128, and a result that reuses the exact
// side of the previous one shares its P instead of copying it. Entries are read as double (a
// float converts to double exactly). Empty when the matrices were not kept.
class ResultMatrix {
public:
    ResultMatrix() = default;
    explicit ResultMatrix(Matrix<float>&& matrix)
        : m_float(std::make_shared<const Matrix<float>>(std::move(matrix)))
    {
    }
    explicit ResultMatrix(MatrixD&& matrix)
        : m_double(std::make_shared<const MatrixD>(std::move(matrix)))
    {
    }
    // Shares a double matrix someone else keeps.
    explicit ResultMatrix(std::shared_ptr<const MatrixD> matrix) : m_double(std::move(matrix)) {}

    Eigen::Index rows() const
    {
        return m_float ? m_float->rows() : m_double ? m_double->rows() : 0;
    }
    Eigen::Index cols() const
    {
        return m_float ? m_float->cols() : m_double ? m_double->cols() : 0;
    }
    Eigen::Index size() const { return rows() * cols(); }
    bool isEmpty() const { return size() == 0; }
    Precision precision() const { return m_float ? Precision::Float : Precision::Double; }

    double operator()(Eigen::Index row, Eigen::Index col) const
    {
        return m_float ? double((*m_float)(row, col)) : (*m_double)(row, col);
    }

    // Entries [first, first + count) of row `row`, as double, into out.
    void readRow(Eigen::Index row, Eigen::Index first, Eigen::Index count, double* out) const
    {
        if (m_float) {
            const float* in = m_float->data() + row * m_float->cols() + first;
            for (Eigen::Index j = 0; j < count; ++j)
                out[j] = double(in[j]);
        } else {
            const double* in = m_double->data() + row * m_double->cols() + first;
            std::copy(in, in + count, out);
        }
    }

    VectorD row(Eigen::Index row) const
    {
        VectorD values(cols());
        readRow(row, 0, cols(), values.data());
        return values;
    }

    MatrixD toDouble() const
    {
        if (m_float)
            return m_float->cast<double>();
        return m_double ? *m_double : MatrixD();
    }

    // The matrix in precision T, or null when it is held in the other precision (or empty).
    template <typename T>
    const Matrix<T>* as() const
    {
        if constexpr (std::is_same_v<T, float>)
            return m_float.get();
        else
            return m_double.get();
    }

private:
    std::shared_ptr<const Matrix<float>> m_float;
    std::shared_ptr<const MatrixD> m_double;
};

}  // namespace attnlab
