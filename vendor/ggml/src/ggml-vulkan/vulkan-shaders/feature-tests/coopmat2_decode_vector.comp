#version 460

#extension GL_NV_cooperative_matrix_decode_vector : require

void main()
{
}
