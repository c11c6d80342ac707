// The CUDA engine in double precision (one source per precision, so the two compile in parallel).
#include "engine/cuda/cuda_engine_impl.cuh"

namespace grayscott::cuda {

template class CudaEngine<double>;
template std::unique_ptr<Engine<double>> make_engine(const Problem&, std::span<const Parameters>,
                                                     const EngineOptions&);

}  // namespace grayscott::cuda
